/// A complete data message received from the server.
public enum WebSocketMessage: Sendable, Equatable {
    /// A text message; the bytes are already validated as UTF-8.
    case text([UInt8])
    /// A binary message.
    case binary([UInt8])

    /// The payload bytes, whatever the kind.
    public var bytes: [UInt8] {
        switch self {
        case .text(let bytes), .binary(let bytes): bytes
        }
    }

    /// The text of a text message (`nil` for binary).
    public var text: String? {
        if case .text(let bytes) = self { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }
}
