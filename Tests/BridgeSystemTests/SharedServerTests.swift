import BridgeTestSupport
import Dispatch
import Synchronization
import Testing

/// The shared test servers' one start (`SharedServer`): the tests that wait for it are suspended, not blocked on the
/// cooperative pool's threads as they were in a global's initializer, where one slow RabbitMQ start held both.
@Suite struct SharedServerTests {
    /// Eight tests wait while the start blocks; the start is released by a ninth task, which runs only if the
    /// waiting ones left the pool's two threads free.
    @Test func theTestsWaitingForTheStartHoldNoThread() async throws {
        let release = DispatchSemaphore(value: 0)
        let starts = Counter()
        let shared = SharedServer { () -> Started in
            starts.add()
            return Started(releasedByATask: release.wait(timeout: .now() + 60) == .success)
        }
        let servers = try await withThrowingTaskGroup(of: Started.self) { group in
            for _ in 0..<8 { group.addTask { try await shared.get() } }
            group.addTask {
                try await Task.sleep(for: .milliseconds(200))
                release.signal()
                return try await shared.get()
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(servers.count == 9 && servers.allSatisfy { $0 === servers[0] })
        #expect(servers[0].releasedByATask, "the waiting tests held the threads the releasing task needed")
        #expect(starts.count == 1)
    }

    /// A start that failed is not tried again: every test gets its error, as with a global's `Result`.
    @Test func aFailedStartIsThrownToEveryTestOnce() async {
        let starts = Counter()
        let shared = SharedServer { () throws -> Started in
            starts.add()
            throw StartFailure()
        }
        for _ in 0..<3 {
            await #expect(throws: StartFailure.self) { try await shared.get() }
        }
        #expect(starts.count == 1)
    }
}

/// What a start made: whether the task released it.
private final class Started: Sendable {
    let releasedByATask: Bool
    init(releasedByATask: Bool = false) { self.releasedByATask = releasedByATask }
}

/// How many times a start ran.
private final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    var count: Int { value.load(ordering: .relaxed) }
    func add() { value.add(1, ordering: .relaxed) }
}

private struct StartFailure: Error {}
