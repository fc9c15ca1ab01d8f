/// Reassembles data messages from frame events (RFC 6455 §5.4) and collects control frames.
///
/// Checks the message-level rules: a continuation needs a message to continue, a new text/binary frame may not
/// start while one is unfinished (1002), text must be UTF-8, validated as the bytes arrive and across fragment
/// boundaries (1007; the check of a message lent in place may be left to the caller, see `receivedPayload`), and a
/// message may not exceed `maxMessageSize` (1009, decided from the frame header before its payload is read).
/// Control frames may arrive between the fragments of a message.
///
/// A message that is one unfragmented frame whose payload arrives in one piece is not copied: it is handed back as
/// that piece of the input (`.inPlace`). Only a message that arrives in several pieces is assembled into an array.
package struct MessageAssembler: Sendable {
    /// What a finished frame produced.
    package enum Output {
        /// A complete message lent in place: the payload piece of the input, valid until the input changes.
        case inPlace(BorrowedMessage)
        /// A complete text or binary message, assembled from several pieces.
        case message(WebSocketMessage)
        /// A complete control frame.
        case control(ControlFrame)
        /// A data message over the limit was read past without being kept (`skipsOversized`): its size in bytes.
        case skipped(Int)
    }

    /// The largest message accepted, in bytes.
    package let maxMessageSize: Int
    /// The frame being read.
    private var frame = FrameHeader(opcode: .continuation, payloadLength: 0)
    /// The opcode (`.text`/`.binary`) of the message being assembled, `nil` between messages.
    private var messageOpcode: WebSocketOpcode?
    private var message: [UInt8] = []
    private var utf8 = UTF8Validator()
    private var control: [UInt8] = []
    /// Whether a message over the limit is read past (`.skipped`) instead of failing with 1009.
    private let skipsOversized: Bool
    /// The size so far of the message being read past, nil when none is.
    private var skipping: Int?

    /// Creates an assembler with a message size limit; `skipsOversized` reads past a bigger message instead of
    /// failing with 1009.
    package init(maxMessageSize: Int, skipsOversized: Bool = false) {
        self.maxMessageSize = maxMessageSize
        self.skipsOversized = skipsOversized
    }

    /// Whether no message is half-assembled.
    package var isBetweenMessages: Bool { messageOpcode == nil }

    /// Starts a frame.
    package mutating func receivedHeader(_ header: FrameHeader) throws(WebSocketProtocolError) {
        frame = header
        switch header.opcode {
        case .close, .ping, .pong:
            control.removeAll(keepingCapacity: true)
        case .continuation:
            guard messageOpcode != nil else { throw .protocolError("continuation frame without a message to continue") }
            if let size = skipping {
                skipping = size > Int.max - header.payloadLength ? Int.max : size + header.payloadLength
                return
            }
            if header.payloadLength > maxMessageSize - message.count {
                guard skipsOversized else { throw .messageTooBig(limit: maxMessageSize) }
                let (size, overflow) = message.count.addingReportingOverflow(header.payloadLength)
                skipping = overflow ? Int.max : size  // a peer's length may be anything up to 2^63 - 1
                message = []
                return
            }
            // Grow geometrically: reserving the exact size for every fragment would reallocate (and copy the
            // message so far) once per fragment. A fragmented message is the one case where the assembled bytes may
            // move again, amortised O(1) per byte, because its total size is unknown until the last fragment.
            let needed = message.count + header.payloadLength
            if needed > message.capacity { message.reserveCapacity(max(needed, message.capacity * 2)) }
        case .text, .binary:
            guard messageOpcode == nil else { throw .protocolError("new message started before the last one ended") }
            if header.payloadLength > maxMessageSize {
                guard skipsOversized else { throw .messageTooBig(limit: maxMessageSize) }
                skipping = header.payloadLength
            }
            messageOpcode = header.opcode
            message = []  // reserved by the first piece that is not the whole message (`receivedPayload`)
            utf8.reset()
        }
    }

    /// Adds payload bytes of the current frame; returns what the frame completed, if anything.
    ///
    /// `checksWholeText` false leaves the UTF-8 check of a text message lent in place (`.inPlace`) to the caller,
    /// who must fail the connection with 1007 when it is not UTF-8; text that arrives in several pieces is checked
    /// here either way, as its pieces arrive.
    package mutating func receivedPayload(
        _ bytes: UnsafeRawBufferPointer,
        isFrameEnd: Bool,
        checksWholeText: Bool = true
    ) throws(WebSocketProtocolError) -> Output? {
        if frame.opcode.isControl {
            control.append(contentsOf: bytes)
            return isFrameEnd ? .control(ControlFrame(opcode: frame.opcode, payload: control)) : nil
        }
        if let size = skipping {
            guard isFrameEnd && frame.fin else { return nil }
            skipping = nil
            messageOpcode = nil
            return .skipped(size)
        }
        let isText = messageOpcode == .text
        let isWhole = message.isEmpty && frame.opcode != .continuation && isFrameEnd && frame.fin
        if isText && (checksWholeText || !isWhole) && !utf8.validate(bytes) { throw .invalidUTF8 }
        if isWhole {
            // The whole message is this piece: lent as it lies in the input.
            if isText && checksWholeText && !utf8.isComplete { throw .invalidUTF8 }
            messageOpcode = nil
            return .inPlace(BorrowedMessage(isText: isText, bytes: bytes))
        }
        if message.isEmpty && frame.opcode != .continuation {
            // A fresh array reserved to the frame's size: the payload is copied into it once, and it moves into
            // the message without another copy.
            message.reserveCapacity(frame.payloadLength)
        }
        message.append(contentsOf: bytes)
        guard isFrameEnd && frame.fin else { return nil }
        if isText && !utf8.isComplete { throw .invalidUTF8 }
        let completed: WebSocketMessage = isText ? .text(message) : .binary(message)
        message = []  // hands the storage over to the message (no copy-on-write later)
        messageOpcode = nil
        return .message(completed)
    }
}
