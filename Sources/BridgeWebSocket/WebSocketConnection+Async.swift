import BridgeSystem

/// The async face of the connection for callers on Swift's cooperative pool: each call runs the blocking
/// operation on `BlockingExecutor.shared`, so no cooperative thread ever waits in `poll` or `write`.
extension WebSocketConnection {
    /// Receives one message, waiting up to `timeout`; `nil` on timeout. Runs the blocking read on
    /// `BlockingExecutor.shared` in steps of at most 250 ms, checking for task cancellation between steps.
    public func receive(timeout: Duration) async throws -> WebSocketMessage? {
        let deadline = ContinuousClock.now + timeout
        while true {
            try Task.checkCancellation()
            let step = min(deadline - ContinuousClock.now, .milliseconds(250))
            let messages = try await BlockingExecutor.shared.perform {
                try self.receiveBatch(timeout: max(step, .zero), maxMessages: 1)
            }
            if let message = messages.first { return message }
            if ContinuousClock.now >= deadline { return nil }
        }
    }

    /// `close(code:reason:)` without blocking the caller's thread (runs on `BlockingExecutor.shared`).
    @discardableResult
    public func close(code: UInt16 = 1000, reason: String = "") async -> WebSocketCloseInfo {
        (try? await BlockingExecutor.shared.perform { self.close(code: code, reason: reason) }) ?? .abnormal
    }

    /// `send(text:)` from async code: the write runs on `BlockingExecutor.shared`.
    public func send(text: String) async throws {
        try await BlockingExecutor.shared.perform { try self.send(text: text) }
    }

    /// `send(text:)` for UTF-8 bytes from async code.
    public func send(text bytes: [UInt8]) async throws {
        try await BlockingExecutor.shared.perform { try self.send(text: bytes) }
    }

    /// `send(binary:)` from async code.
    public func send(binary bytes: [UInt8]) async throws {
        try await BlockingExecutor.shared.perform { try self.send(binary: bytes) }
    }
}
