/// A complete data message lent by `WebSocketConnection.receive(timeout:maxMessages:_:)` for the duration of the
/// call that hands it over.
///
/// A message that was one complete, unfragmented frame in one read is lent where it lies in the connection's read
/// buffer: no copy, no allocation (the live path's per-message payload array was its own allocation, copy and free
/// on the socket reader). A message assembled from fragments, or from a frame split across reads, is lent from the
/// assembled bytes. Text is validated as UTF-8 before it is lent, either way, unless the receive leaves that check
/// to its caller (`WebSocketConnection.receive(timeout:maxMessages:textCheckedBy:)`, for text read as strict JSON).
public struct BorrowedMessage {
    /// Whether this is a text message (else binary).
    public let isText: Bool
    /// The payload. Valid only inside the call that lends it: copy (`copied()`) to keep it.
    public let bytes: UnsafeRawBufferPointer

    /// Wraps lent bytes.
    package init(isText: Bool, bytes: UnsafeRawBufferPointer) {
        self.isText = isText
        self.bytes = bytes
    }

    /// An owned copy.
    public func copied() -> WebSocketMessage {
        isText ? .text(Array(bytes)) : .binary(Array(bytes))
    }
}

// Its bytes are borrowed from a buffer that the lending call owns and reuses after it returns.
@available(*, unavailable)
extension BorrowedMessage: Sendable {}
