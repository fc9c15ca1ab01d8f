/// The frame opcodes of RFC 6455 §5.2. Others (3–7, 11–15) are reserved and a protocol error.
package enum WebSocketOpcode: UInt8, Sendable {
    /// A later fragment of a text or binary message.
    case continuation = 0x0
    /// The first (or only) frame of a UTF-8 text message.
    case text = 0x1
    /// The first (or only) frame of a binary message.
    case binary = 0x2
    /// Starts or answers the close handshake.
    case close = 0x8
    /// Asks the peer for a pong with the same payload.
    case ping = 0x9
    /// Answers a ping (or is an unsolicited heartbeat).
    case pong = 0xA

    /// Close, ping and pong: at most 125 bytes, never fragmented, may arrive between fragments.
    package var isControl: Bool { rawValue & 0x8 != 0 }
}

/// A parsed frame header (RFC 6455 §5.2).
package struct FrameHeader: Sendable, Equatable {
    /// Whether this is the last frame of its message.
    package var fin: Bool
    /// RSV1–RSV3 as the low three bits (RSV1 = 4). Non-zero only with a negotiated extension; we negotiate none.
    package var reservedBits: UInt8
    /// The frame's opcode.
    package var opcode: WebSocketOpcode
    /// The masking key, when the frame is masked (client frames always are; server frames never).
    package var maskKey: UInt32?
    /// Payload bytes that follow the header.
    package var payloadLength: Int

    /// Creates a header.
    package init(
        fin: Bool = true,
        reservedBits: UInt8 = 0,
        opcode: WebSocketOpcode,
        maskKey: UInt32? = nil,
        payloadLength: Int
    ) {
        self.fin = fin
        self.reservedBits = reservedBits
        self.opcode = opcode
        self.maskKey = maskKey
        self.payloadLength = payloadLength
    }
}

/// A complete control frame received from the server.
package struct ControlFrame: Sendable, Equatable {
    /// `.close`, `.ping` or `.pong`.
    package var opcode: WebSocketOpcode
    /// At most 125 bytes.
    package var payload: [UInt8]

    /// Creates a control frame.
    package init(opcode: WebSocketOpcode, payload: [UInt8]) {
        self.opcode = opcode
        self.payload = payload
    }
}

/// A violation of RFC 6455 by the server, with the close code the client answers with.
package struct WebSocketProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1002 (protocol error), 1007 (invalid UTF-8) or 1009 (message too big).
    package var closeCode: UInt16
    /// What was wrong; also sent as the close reason (kept under 123 bytes).
    package var reason: String

    /// Creates an error.
    package init(closeCode: UInt16, reason: String) {
        self.closeCode = closeCode
        self.reason = reason
    }

    /// A 1002 protocol error.
    package static func protocolError(_ reason: String) -> WebSocketProtocolError {
        WebSocketProtocolError(closeCode: CloseCode.protocolError, reason: reason)
    }

    /// A 1007 error: a text message or close reason that is not UTF-8.
    package static let invalidUTF8 = WebSocketProtocolError(
        closeCode: CloseCode.invalidPayload,
        reason: "invalid UTF-8"
    )

    /// A 1009 error: a message over the configured limit.
    package static func messageTooBig(limit: Int) -> WebSocketProtocolError {
        WebSocketProtocolError(closeCode: CloseCode.messageTooBig, reason: "message larger than \(limit) bytes")
    }

    /// `reason (close code N)`.
    package var description: String { "\(reason) (close code \(closeCode))" }
}
