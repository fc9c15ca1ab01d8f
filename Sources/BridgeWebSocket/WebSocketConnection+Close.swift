import BridgeSystem
import BridgeTLS
import Synchronization

extension WebSocketConnection {
    /// Runs the close handshake (RFC 6455 §7.1.2): sends a close frame with `code` and `reason`, waits up to
    /// `closeTimeout` for the peer's close frame, then shuts the TCP connection down. Never throws.
    ///
    /// Returns the peer's close code and reason: 1005 when its close frame had no code, 1006 when the
    /// connection dropped or the peer did not answer in time. When the connection was already closed (the peer
    /// closed first, or a protocol error), returns how it ended without sending anything.
    ///
    /// If another thread is inside `receive` (or `receiveBatch`), that thread receives the peer's close (and gets
    /// `.closed`); otherwise this call reads, discarding data messages that arrive before the close.
    /// - Precondition: `code` is a code that may be sent (1000–1003, 1007–1014, 3000–4999).
    @discardableResult
    public func close(code: UInt16 = 1000, reason: String = "") -> WebSocketCloseInfo {
        precondition(CloseCode.isValidOnWire(code), "close code \(code) may not be sent")
        let deadline = ContinuousClock.now + options.closeTimeout
        let action = machine.withLock { $0.sendClose(code: code, reason: reason) }
        perform(action)
        while machine.withLock({ $0.state != .closed }) && ContinuousClock.now < deadline {
            let receivesBefore = finishedReceives.withLock { $0 }
            let readerWasFree: Bool? = reader.withLockIfAvailable { state in
                // Short steps, so a reader thread that arrives later is not shut out for the whole timeout.
                let step = min(deadline, ContinuousClock.now + .milliseconds(50))
                _ = try? receive(
                    state: &state,
                    until: step,
                    maxMessages: .max,
                    Lender(body: { _ in true }, checksWholeText: true)
                )
                return true
            }
            if readerWasFree == nil {
                // Another thread is reading and will see the peer's close: wait until its receive ends (counted
                // before trying the lock, so an end in between is not missed) or the deadline passes.
                finishedReceives.wait { finished in
                    let left = deadline - ContinuousClock.now
                    return finished != receivesBefore || left <= .zero ? ((), nil) : (nil, left)
                }
            }
        }
        let timedOut = machine.withLock { $0.connectionDropped() }  // no-op when the handshake completed
        if timedOut == .shutdown {
            logger.debug("websocket close not answered in time", metadata: [LogKey.webSocketURL: url.description])
        }
        stream.shutdown()
        return machine.withLock { $0.peerClose } ?? .abnormal
    }
}
