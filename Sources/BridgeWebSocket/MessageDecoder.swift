/// The receive pipeline without I/O: bytes in, messages and control frames out (`FrameParser` feeding a
/// `MessageAssembler`). The connection and the `ws-codec` benchmark run exactly this code.
package struct MessageDecoder: Sendable {
    private var parser = FrameParser()
    private var assembler: MessageAssembler

    /// Creates a decoder with a message size limit (bytes); `skipsOversized` reads past a bigger data message
    /// (reported to `decode`'s `skipped`) instead of failing with 1009.
    package init(maxMessageSize: Int, skipsOversized: Bool = false) {
        assembler = MessageAssembler(maxMessageSize: maxMessageSize, skipsOversized: skipsOversized)
    }

    /// Decodes `input[offset...]`, lending each complete message to `visit` (see `BorrowedMessage`: a message that
    /// was one unfragmented frame in `input` is lent in place).
    ///
    /// Stops and advances `offset` when the input is used up, after `limit` messages, when `visit` returns false
    /// (the rest of the input is left for the next call), or when a control frame completes (returned, so the caller
    /// can answer a ping or a close before going on).
    ///
    /// A data message over the limit of a decoder that skips them is read past and its size given to `skipped`.
    ///
    /// `checksWholeText` false lends a text message that was one frame in `input` before its UTF-8 is checked:
    /// `visit` must check it and throw (`.invalidUTF8`) when it is not UTF-8. Whatever `visit` throws ends the decode
    /// as the decoder's own errors do.
    package mutating func decode(
        _ input: UnsafeRawBufferPointer,
        offset: inout Int,
        limit: Int = .max,
        checksWholeText: Bool = true,
        skipped: (Int) -> Void = { _ in },
        visit: (BorrowedMessage) throws(WebSocketProtocolError) -> Bool
    ) throws(WebSocketProtocolError) -> ControlFrame? {
        var visited = 0
        while visited < limit, let event = try parser.next(input, offset: &offset) {
            switch event {
            case .header(let header):
                try assembler.receivedHeader(header)
            case .payload(let bytes, let isFrameEnd):
                let output = try assembler.receivedPayload(
                    bytes,
                    isFrameEnd: isFrameEnd,
                    checksWholeText: checksWholeText
                )
                switch output {
                case .inPlace(let message):
                    visited += 1
                    if try !visit(message) { return nil }
                case .message(let message):
                    visited += 1
                    var isText = false
                    if case .text = message { isText = true }
                    // `withUnsafeBufferPointer`: its error type is typed (`withUnsafeBytes` rethrows `any Error`).
                    let goOn = try message.bytes.withUnsafeBufferPointer { (buffer) throws(WebSocketProtocolError) in
                        try visit(BorrowedMessage(isText: isText, bytes: UnsafeRawBufferPointer(buffer)))
                    }
                    if !goOn { return nil }
                case .control(let frame): return frame
                case .skipped(let size): skipped(size)
                case nil: break
                }
            }
        }
        return nil
    }

    /// `decode(_:offset:limit:visit:)` into owned messages, appended to `messages` until it holds `limit`.
    package mutating func decode(
        _ input: UnsafeRawBufferPointer,
        offset: inout Int,
        into messages: inout [WebSocketMessage],
        limit: Int = .max
    ) throws(WebSocketProtocolError) -> ControlFrame? {
        guard messages.count < limit else { return nil }
        return try decode(input, offset: &offset, limit: limit - messages.count) { message in
            messages.append(message.copied())
            return true
        }
    }

    /// Whether the decoder sits between messages and frames (nothing half-received).
    package var isIdle: Bool { parser.isAtFrameBoundary && assembler.isBetweenMessages }
}
