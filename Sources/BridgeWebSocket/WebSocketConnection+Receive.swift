import BridgeSystem
import BridgeTLS
import Synchronization

extension WebSocketConnection {
    /// Waits up to `timeout` for data and returns every complete message decoded from what arrived (at most
    /// `maxMessages`; the rest stays buffered for the next call). Returns an empty array when nothing complete
    /// arrived in time: the caller's cue for dead-peer detection.
    ///
    /// `receive(timeout:maxMessages:_:)` with each message copied out of the read buffer into its own array; the
    /// same blocking, thread-safety and errors.
    public func receiveBatch(timeout: Duration, maxMessages: Int = .max) throws -> [WebSocketMessage] {
        var messages: [WebSocketMessage] = []
        _ = try receive(timeout: timeout, maxMessages: maxMessages) { message in
            messages.append(message.copied())
            return true
        }
        return messages
    }

    /// Waits up to `timeout` for data and lends every complete message decoded from what arrived to `body`, in
    /// order: at most `maxMessages`, and none after `body` returns false (the rest stays buffered for the next
    /// call). Returns how many were lent: 0 when nothing complete arrived in time, the caller's cue for dead-peer
    /// detection.
    ///
    /// A message that was one complete, unfragmented frame is lent where it lies in the read buffer (see
    /// `BorrowedMessage`), so its bytes are valid only inside `body`. `body` runs with the reader lock held: it may
    /// send, but it must not receive or close this connection (`close` would wait for this very receive to end).
    ///
    /// Blocking: call it from a dedicated thread or through `BlockingExecutor`, never on the cooperative pool.
    /// Thread-safe (concurrent calls take turns) and safe to use while other threads send. Pings are answered
    /// here.
    ///
    /// Throws `WebSocketError` when the connection ends: `.closed` (peer's code and reason, 1005 or 1006),
    /// `.protocolViolation` or `.messageTooBig` (after sending the close), or the same error again on later calls.
    /// Messages decoded before the end are lent first; the error comes with the next call.
    public func receive(timeout: Duration, maxMessages: Int = .max, _ body: (BorrowedMessage) -> Bool) throws -> Int {
        try receive(timeout: timeout, maxMessages: maxMessages, checksWholeText: true, body)
    }

    /// `receive(timeout:maxMessages:_:)` for a caller that reads every text message as strict JSON, which checks
    /// its UTF-8 anyway: a text message that was one frame in one read is lent *before* its UTF-8 is checked, so
    /// the live path passes over each frame once less. `body` must throw `WebSocketProtocolError.invalidUTF8` for
    /// a text message that is not UTF-8 (a strict JSON parse that accepts it has checked it; one that refuses it
    /// may have stopped before the bad byte, so check that text with `UTF8Validator`): the connection then fails
    /// with 1007, as RFC 6455 §8.1 asks, at the same place in the stream as its own check would have failed it.
    /// A message assembled from several pieces is checked by the connection as before.
    package func receive(
        timeout: Duration,
        maxMessages: Int = .max,
        textCheckedBy body: (BorrowedMessage) throws(WebSocketProtocolError) -> Bool
    ) throws -> Int {
        try receive(timeout: timeout, maxMessages: maxMessages, checksWholeText: false, body)
    }

    private func receive(
        timeout: Duration,
        maxMessages: Int,
        checksWholeText: Bool,
        _ body: (BorrowedMessage) throws(WebSocketProtocolError) -> Bool
    ) throws -> Int {
        precondition(maxMessages > 0, "maxMessages must be positive")
        let deadline = ContinuousClock.now + timeout
        defer {
            finishedReceives.withLock { $0 &+= 1 }
            finishedReceives.broadcast()
        }
        return try withoutActuallyEscaping(body) { body in
            let lender = Lender(body: body, checksWholeText: checksWholeText)
            return try reader.withLock { state in
                try receive(state: &state, until: deadline, maxMessages: maxMessages, lender)
            }
        }
    }

    /// The receive loop, with the reader lock held.
    func receive(
        state: inout ReaderState,
        until deadline: ContinuousClock.Instant,
        maxMessages: Int,
        _ lender: Lender
    ) throws -> Int {
        if let error = state.pendingError { throw error }
        var lent = Lending(limit: maxMessages)
        var hasRead = false
        while true {
            if !state.buffer.isEmpty {
                do {
                    try decodeBuffered(state: &state, lending: &lent, lender)
                } catch let error as WebSocketError {
                    // The connection ended: hand out what was decoded before, and the error after.
                    state.pendingError = error
                    if lent.count == 0 { throw error }
                    return lent.count
                }
            }
            if lent.count > 0 { return lent.count }
            if let error = machine.withLock({ $0.state == .closed ? $0.terminalError : nil }) {
                state.pendingError = error
                throw error
            }
            // Bytes that complete no message (one endless message, read past or not) must not hold the caller past
            // its deadline: it has a dead peer to find and a stop to see (docs/RELIABILITY.md, "Wire numbers and
            // traps: audit"). A read that finds bytes waiting returns them whatever the deadline, so the loop read on
            // for as long as the peer kept sending. After one read, so that a zero timeout still reads what is there.
            if hasRead && ContinuousClock.now >= deadline { return 0 }
            let buffer = state.buffer
            buffer.start = 0
            buffer.end = 0
            let result: StreamReadResult
            do {
                result = try stream.read(into: buffer.storage, deadline: deadline)
            } catch {
                throw dropped(state: &state, underlying: WebSocketError.transport(error, while: "reading"))
            }
            hasRead = true
            switch result {
            case .read(let count): buffer.end = count
            case .timedOut: return 0
            case .endOfStream: throw dropped(state: &state, underlying: nil)
            }
        }
    }

    /// Decodes the buffered bytes, lending messages to `body` and acting on control frames as they complete.
    private func decodeBuffered(
        state: inout ReaderState,
        lending lent: inout Lending,
        _ lender: Lender
    ) throws {
        let buffer = state.buffer
        while !buffer.isEmpty && lent.wantsMore {
            let readable = UnsafeRawBufferPointer(rebasing: buffer.storage[buffer.start..<buffer.end])
            var offset = 0
            let control: ControlFrame?
            do {
                control = try state.decoder.decode(
                    readable,
                    offset: &offset,
                    limit: lent.limit - lent.count,
                    checksWholeText: lender.checksWholeText,
                    skipped: { size in skippedMessage(size: size) }
                ) { (message) throws(WebSocketProtocolError) in
                    let wantsMore = try lender.body(message)
                    lent.count += 1  // not a message `body` refused: the receive throws at once when it is the first
                    lent.stopped = !wantsMore
                    return wantsMore
                }
            } catch let violation {
                buffer.start = buffer.end
                let action = machine.withLock { $0.receivedProtocolError(violation) }
                perform(action)
                throw machine.withLock { $0.terminalError } ?? .violation(violation)
            }
            buffer.start += offset
            if let control {
                let action = machine.withLock { $0.receivedControl(control) }
                perform(action)
                if let error = machine.withLock({ $0.state == .closed ? $0.terminalError : nil }) { throw error }
            }
        }
    }

    /// A data message over `maxMessageSize` was read past: counted and said at error level, since what it carried
    /// (a subscription's `init`, events) is lost to this connection.
    private func skippedMessage(size: Int) {
        skipped.add(1, ordering: .relaxed)
        logger.error(
            "skipped a WebSocket message over the size limit; what it carried is lost (activity mode still reads "
                + "the changes from the activity log, live mode loses them)",
            metadata: [LogKey.webSocketMessageBytes: size, LogKey.webSocketMessageLimit: options.maxMessageSize])
    }

    /// The stream ended or failed without a close frame.
    private func dropped(state: inout ReaderState, underlying: WebSocketError?) -> WebSocketError {
        let action = machine.withLock { $0.connectionDropped(underlying: underlying) }
        perform(action)
        let error = machine.withLock { $0.terminalError } ?? .closed(.abnormal)
        state.pendingError = error
        return error
    }

    /// Carries out a state-machine action (outside the state lock). Failures to send a pong or a closing
    /// frame are not reported: the connection is either ending anyway or the next read shows the failure.
    func perform(_ action: WebSocketStateMachine.Action) {
        switch action {
        case .none:
            return
        case .sendPong(let payload):
            do {
                try payload.withUnsafeBytes { try sendFrame(.pong, payload: $0) }
            } catch {
                logger.debug("websocket pong not sent", metadata: [LogKey.error: "\(error)"])
            }
        case .sendClose(let code, let reason):
            sendCloseFrame(code: code, reason: reason)
        case .sendCloseAndShutdown(let code, let reason):
            sendCloseFrame(code: code, reason: reason)
            stream.shutdown()
        case .shutdown:
            stream.shutdown()
        }
    }

    /// Writes a close frame, best effort, bounded by `writeTimeout`.
    func sendCloseFrame(code: UInt16?, reason: String) {
        let payload = WebSocketStateMachine.closePayload(code: code, reason: reason)
        let deadline = ContinuousClock.now + options.writeTimeout
        do {
            try writer.withLock { writer in
                try payload.withUnsafeBytes { try write(.close, payload: $0, using: &writer, deadline: deadline) }
            }
        } catch {
            logger.debug("websocket close frame not sent", metadata: [LogKey.error: "\(error)"])
        }
    }
}

/// How many messages one receive has lent, and whether its caller wants more.
private struct Lending {
    /// At most this many per receive.
    let limit: Int
    var count = 0
    /// The caller's `body` returned false.
    var stopped = false

    var wantsMore: Bool { count < limit && !stopped }
}

/// The caller's `body` of one receive, carried into the reader lock. A plain closure parameter would tie the lock's
/// state to the caller's isolation region, which `Mutex.withLock` refuses.
struct Lender: @unchecked Sendable {
    // @unchecked: made and called only on the thread inside `receive(timeout:maxMessages:_:)`, within that call
    // (`withoutActuallyEscaping` traps if the closure outlives it); never sent to another thread.
    let body: (BorrowedMessage) throws(WebSocketProtocolError) -> Bool
    /// Whether the connection checks the UTF-8 of text lent in place (else `body` does).
    let checksWholeText: Bool
}
