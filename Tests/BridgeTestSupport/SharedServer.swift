import BridgeSystem
import Synchronization

/// A server the tests of a suite share (RabbitMQ takes many seconds to start), started once, by the first test that
/// asks, on `BlockingExecutor.shared`.
///
/// Not a global's initializer: every test that reads the global while the first one starts it waits in the
/// one-time initialization on a thread of Swift's cooperative pool, and the test runner has two; one slow start
/// held both, and every other test of the run waited behind it. Here the starting test and the waiting ones are
/// suspended tasks. A failed start is kept and thrown to every test, as a global's `Result` would be.
public final class SharedServer<Server: Sendable>: Sendable {
    private enum State {
        case idle
        case starting(waiters: [CheckedContinuation<Server, any Error>])
        case started(Result<Server, any Error>)
    }

    private let state = Mutex<State>(.idle)
    private let start: @Sendable () throws -> Server

    /// A server that `start` makes and starts (blocking) on the first `get()`.
    public init(start: @escaping @Sendable () throws -> Server) {
        self.start = start
    }

    /// The server, started by the first caller; the others wait for that start without holding a thread.
    public func get() async throws -> Server {
        let isFirst = state.withLock { state in
            guard case .idle = state else { return false }
            state = .starting(waiters: [])
            return true
        }
        guard isFirst else { return try await waitForTheFirst() }
        let result: Result<Server, any Error>
        do {
            result = .success(try await BlockingExecutor.shared.perform(start))
        } catch {
            result = .failure(error)
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Server, any Error>] in
            defer { state = .started(result) }
            guard case .starting(let waiters) = state else { return [] }
            return waiters
        }
        for waiter in waiters { waiter.resume(with: result) }
        return try result.get()
    }

    private func waitForTheFirst() async throws -> Server {
        try await withCheckedThrowingContinuation { continuation in
            let known = state.withLock { state -> Result<Server, any Error>? in
                switch state {
                case .started(let result):
                    return result
                case .starting(var waiters):
                    waiters.append(continuation)
                    state = .starting(waiters: waiters)
                    return nil
                case .idle:
                    preconditionFailure("a waiter before the first get()")
                }
            }
            if let known { continuation.resume(with: known) }
        }
    }
}
