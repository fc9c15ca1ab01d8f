/// The receive pipeline without I/O: bytes in, messages and control frames out (`FrameParser` feeding a
/// `MessageAssembler`). The connection and the `ws-codec` benchmark run exactly this code.
package struct MessageDecoder: Sendable {
    private var parser = FrameParser()
    private var assembler: MessageAssembler

    /// Creates a decoder with a message size limit (bytes).
    package init(maxMessageSize: Int) {
        assembler = MessageAssembler(maxMessageSize: maxMessageSize)
    }

    /// Decodes `input[offset...]`, appending complete messages to `messages`.
    ///
    /// Stops and advances `offset` when the input is used up, when `messages` holds `limit` messages, or when a
    /// control frame completes (returned, so the caller can answer a ping or a close before going on).
    package mutating func decode(
        _ input: UnsafeRawBufferPointer,
        offset: inout Int,
        into messages: inout [WebSocketMessage],
        limit: Int = .max
    ) throws(WebSocketProtocolError) -> ControlFrame? {
        while messages.count < limit, let event = try parser.next(input, offset: &offset) {
            switch event {
            case .header(let header):
                try assembler.receivedHeader(header)
            case .payload(let bytes, let isFrameEnd):
                switch try assembler.receivedPayload(bytes, isFrameEnd: isFrameEnd) {
                case .message(let message): messages.append(message)
                case .control(let frame): return frame
                case nil: break
                }
            }
        }
        return nil
    }

    /// Whether the decoder sits between messages and frames (nothing half-received).
    package var isIdle: Bool { parser.isAtFrameBoundary && assembler.isBetweenMessages }
}
