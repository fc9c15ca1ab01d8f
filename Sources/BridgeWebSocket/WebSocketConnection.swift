public import BridgeSystem
import BridgeTLS
import Synchronization

/// An open WebSocket client connection (RFC 6455) over TCP or TLS.
///
/// Built for one dedicated reader thread and any number of writers:
/// - `receive(timeout:maxMessages:_:)` blocks (off Swift's cooperative pool) until data arrives, then lends every
///   message decoded from one large read, in place in the read buffer when it was one frame (`receiveBatch` returns
///   copies). Pings are answered and the close handshake is handled inside.
/// - `send(text:)`/`send(binary:)` may be called from any thread at any time, also while a reader waits.
/// - `close(code:reason:)` runs the close handshake, bounded by `closeTimeout`.
///
/// Three locks, each guarding one thing, never taken in the reverse order (reader → writer → state):
/// `reader` (read buffer and decoder, held for a whole receive), `writer` (encoder and frame buffer, held
/// for a whole frame so frames never interleave) and `machine` (the protocol state, held only for an event).
public final class WebSocketConnection: Sendable {
    /// The URL this connection was opened for.
    public let url: WebSocketURL
    /// The address of the server.
    public let remoteAddress: SocketAddress
    /// The options the connection was opened with (timeouts, limits).
    let options: WebSocketOptions
    /// The transport (plain TCP or TLS); supports one reader and one writer at a time.
    let stream: any ByteStream
    /// Receives debug lines (failed pongs and close frames) and an error line per message skipped for its size;
    /// never message contents.
    let logger: Logger
    /// Data messages read past for their size (`WebSocketOptions.skipsOversizedMessages`).
    let skipped = Atomic<Int>(0)
    /// Read buffer and decoder: held for a whole receive.
    let reader: Mutex<ReaderState>
    /// Encoder and frame buffer: held for a whole frame, so frames never interleave.
    let writer: Mutex<FrameWriter>
    /// The protocol state: held only while handling one event.
    let machine = Mutex(WebSocketStateMachine())
    /// How many receives have ended: `close` waits on it while another thread reads (that thread sees the peer's
    /// close frame, or gives the reader lock back, and either wakes it).
    let finishedReceives = ConditionLock<UInt64>(0)

    /// Wraps an upgraded stream. `leftover` holds bytes read after the handshake's head (early frames).
    init(
        url: WebSocketURL,
        options: WebSocketOptions,
        stream: any ByteStream,
        leftover: ArraySlice<UInt8>,
        logger: Logger
    ) {
        self.url = url
        self.options = options
        self.stream = stream
        self.remoteAddress = stream.remoteAddress
        self.logger = logger
        let buffer = ReadBuffer(capacity: max(options.readBufferSize, 4096))
        buffer.append(leftover)
        let decoder = MessageDecoder(
            maxMessageSize: options.maxMessageSize, skipsOversized: options.skipsOversizedMessages)
        reader = Mutex(ReaderState(buffer: buffer, decoder: decoder))
        writer = Mutex(FrameWriter())
    }

    deinit {
        stream.shutdown()
    }

    /// Data messages read past for their size so far (`WebSocketOptions.skipsOversizedMessages`).
    public var skippedMessages: Int { skipped.load(ordering: .relaxed) }

    /// Whether the connection is open for sending (no close sent or received, no failure).
    public var isOpen: Bool { machine.withLock { $0.state == .open } }

    // MARK: - Sending

    /// Sends a text message. Thread-safe; waits at most `writeTimeout` for socket space.
    /// Throws `WebSocketError` (`.closed` once closing or closed; a failed write closes the connection).
    public func send(text: String) throws {
        var text = text
        try text.withUTF8 { try sendFrame(.text, payload: UnsafeRawBufferPointer($0)) }
    }

    /// Sends UTF-8 bytes as a text message. Throws `.invalidRequest` when they are not valid UTF-8.
    public func send(text bytes: [UInt8]) throws {
        guard UTF8Validator.isValid(bytes) else {
            throw WebSocketError(.invalidRequest, "text message is not valid UTF-8")
        }
        try bytes.withUnsafeBytes { try sendFrame(.text, payload: $0) }
    }

    /// Sends a binary message.
    public func send(binary bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try sendFrame(.binary, payload: $0) }
    }

    /// Drops the connection at once, without a close handshake (fatal errors, tests). Readers get `.closed`
    /// with 1006.
    public func abort() {
        let action = machine.withLock { $0.connectionDropped() }
        if action == .shutdown { stream.shutdown() }
    }

    /// Encodes and writes one frame while holding the writer lock. Data frames need an open connection.
    func sendFrame(_ opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer) throws {
        let deadline = ContinuousClock.now + options.writeTimeout
        try writer.withLock { writer in
            if !opcode.isControl { try machine.withLock { try $0.checkCanSend() } }
            try write(opcode, payload: payload, using: &writer, deadline: deadline)
        }
    }

    /// Writes a frame with the writer lock already held. A failed write leaves a partial frame on the wire,
    /// so it ends the connection.
    func write(
        _ opcode: WebSocketOpcode,
        payload: UnsafeRawBufferPointer,
        using writer: inout FrameWriter,
        deadline: ContinuousClock.Instant
    ) throws {
        let frame = writer.encode(opcode, payload: payload)
        do {
            try stream.write(frame, deadline: deadline)
        } catch {
            let wrapped = WebSocketError.transport(error, while: "sending a frame")
            let action = machine.withLock { $0.connectionDropped(underlying: wrapped) }
            if action == .shutdown { stream.shutdown() }
            throw wrapped
        }
        writer.releaseLargeBuffer()
    }
}
