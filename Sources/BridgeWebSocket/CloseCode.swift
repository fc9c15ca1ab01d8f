/// Close status codes of RFC 6455 §7.4 that the client uses or must recognise.
package enum CloseCode {
    /// Normal closure.
    package static let normal: UInt16 = 1000
    /// The peer broke the protocol.
    package static let protocolError: UInt16 = 1002
    /// A text message or close reason was not UTF-8.
    package static let invalidPayload: UInt16 = 1007
    /// A message exceeded the size limit.
    package static let messageTooBig: UInt16 = 1009
    /// Reported (never sent) when a close frame carried no status code.
    package static let noStatusReceived: UInt16 = 1005
    /// Reported (never sent) when the connection ended without a close frame.
    package static let abnormalClosure: UInt16 = 1006

    /// Whether `code` may appear in a close frame on the wire (RFC 6455 §7.4.1–7.4.2 and the IANA registry):
    /// 1000–1003, 1007–1014, and 3000–4999. 1004–1006 and 1015 are reserved or report-only.
    package static func isValidOnWire(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}

/// How a WebSocket connection ended: the peer's close code and reason, or 1005/1006 for none.
public struct WebSocketCloseInfo: Sendable, Equatable, CustomStringConvertible {
    /// The peer's status code; 1005 when its close frame had none, 1006 when the connection dropped
    /// (or the peer did not answer within the close timeout).
    public var code: UInt16
    /// The peer's reason (UTF-8, possibly empty).
    public var reason: String

    /// Creates a close description.
    public init(code: UInt16, reason: String = "") {
        self.code = code
        self.reason = reason
    }

    /// The connection ended without a close frame.
    public static let abnormal = WebSocketCloseInfo(code: CloseCode.abnormalClosure)

    /// `1000 "bye"`.
    public var description: String { reason.isEmpty ? "\(code)" : "\(code) \"\(reason)\"" }
}
