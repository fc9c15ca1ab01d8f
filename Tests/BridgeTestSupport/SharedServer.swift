import BridgeSystem
import Synchronization

/// A server the tests of a suite share (RabbitMQ takes many seconds to start), started once, by the first test that
/// asks, on `BlockingExecutor.shared`.
///
/// Not a global's initializer: every test that reads the global while the first one starts it waits in the
/// one-time initialization on a thread of Swift's cooperative pool, and the test runner has two; one slow start
/// held both, and every other test of the run waited behind it. Here the start is one task whose value every test
/// awaits, suspended; a failed start is thrown to every test, as a global's `Result` would be.
public final class SharedServer<Server: Sendable>: Sendable {
    private let started = Mutex<Task<Server, any Error>?>(nil)
    private let start: @Sendable () throws -> Server

    /// A server that `start` makes and starts (blocking) on the first `get()`.
    public init(start: @escaping @Sendable () throws -> Server) {
        self.start = start
    }

    /// The server, started by the first caller; the others wait for that start without holding a thread.
    public func get() async throws -> Server {
        let start = self.start
        let task = started.withLock { task in
            if let task { return task }
            let first = Task { try await BlockingExecutor.shared.perform(start) }
            task = first
            return first
        }
        return try await task.value
    }
}
