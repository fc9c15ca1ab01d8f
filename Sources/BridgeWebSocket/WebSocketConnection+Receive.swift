import BridgeSystem
import BridgeTLS
import Synchronization

extension WebSocketConnection {
    /// Waits up to `timeout` for data and returns every complete message decoded from what arrived (at most
    /// `maxMessages`; the rest stays buffered for the next call). Returns an empty array when nothing complete
    /// arrived in time: the caller's cue for dead-peer detection.
    ///
    /// Blocking: call it from a dedicated thread or through `BlockingExecutor`, never on the cooperative pool.
    /// Thread-safe (concurrent calls take turns) and safe to use while other threads send. Pings are answered
    /// here. Payloads are copied once, from the read buffer into the message.
    ///
    /// Throws `WebSocketError` when the connection ends: `.closed` (peer's code and reason, 1005 or 1006),
    /// `.protocolViolation` or `.messageTooBig` (after sending the close), or the same error again on later calls.
    /// Messages decoded before the end are returned first; the error comes with the next call.
    public func receiveBatch(timeout: Duration, maxMessages: Int = .max) throws -> [WebSocketMessage] {
        precondition(maxMessages > 0, "maxMessages must be positive")
        let deadline = ContinuousClock.now + timeout
        defer {
            finishedReceives.withLock { $0 &+= 1 }
            finishedReceives.broadcast()
        }
        return try reader.withLock { state in
            try receive(state: &state, until: deadline, maxMessages: maxMessages)
        }
    }

    /// The receive loop, with the reader lock held.
    func receive(state: inout ReaderState, until deadline: ContinuousClock.Instant, maxMessages: Int) throws
        -> [WebSocketMessage]
    {
        if let error = state.pendingError { throw error }
        var messages: [WebSocketMessage] = []
        while true {
            if !state.buffer.isEmpty {
                do {
                    try decodeBuffered(state: &state, into: &messages, limit: maxMessages)
                } catch let error as WebSocketError {
                    // The connection ended: hand out what was decoded before, and the error after.
                    state.pendingError = error
                    if messages.isEmpty { throw error }
                    return messages
                }
            }
            if !messages.isEmpty { return messages }
            if let error = machine.withLock({ $0.state == .closed ? $0.terminalError : nil }) {
                state.pendingError = error
                throw error
            }
            let buffer = state.buffer
            buffer.start = 0
            buffer.end = 0
            let result: StreamReadResult
            do {
                result = try stream.read(into: buffer.storage, deadline: deadline)
            } catch {
                throw dropped(state: &state, underlying: WebSocketError.transport(error, while: "reading"))
            }
            switch result {
            case .read(let count): buffer.end = count
            case .timedOut: return []
            case .endOfStream: throw dropped(state: &state, underlying: nil)
            }
        }
    }

    /// Decodes the buffered bytes into `messages`, acting on control frames as they complete.
    private func decodeBuffered(state: inout ReaderState, into messages: inout [WebSocketMessage], limit: Int) throws {
        let buffer = state.buffer
        while !buffer.isEmpty && messages.count < limit {
            let readable = UnsafeRawBufferPointer(rebasing: buffer.storage[buffer.start..<buffer.end])
            var offset = 0
            let control: ControlFrame?
            do {
                control = try state.decoder.decode(readable, offset: &offset, into: &messages, limit: limit)
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
