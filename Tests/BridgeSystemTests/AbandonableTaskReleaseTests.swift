import BridgeSystem
import Synchronization
import Testing

/// `DedicatedThreadExecutor.runAbandoningOnCancel` lets go of its body (and what the body holds) before its caller
/// resumes. A sink runner runs this way, holding its sink and the sink's `webhooks.db`: the task used to resume its
/// caller first and release the body afterwards, on its own thread, so a process that exited as soon as its runners
/// returned could exit with the database still referenced (and, before `SQLiteDatabase.close()`, never closed).
@Suite struct AbandonableTaskReleaseTests {
    /// Something the body holds; counts how many are still alive.
    final class Held: Sendable {
        static let alive = Atomic<Int>(0)
        init() { Self.alive.add(1, ordering: .relaxed) }
        deinit { Self.alive.subtract(1, ordering: .relaxed) }
    }

    @Test func theBodyIsReleasedBeforeTheCallerResumes() async throws {
        var stillHeld = 0
        for _ in 0..<300 {
            let executor = DedicatedThreadExecutor(name: "abandonable")
            do {
                let held = Held()
                _ = try await executor.runAbandoningOnCancel { withExtendedLifetime(held) { 1 } }
            }
            if Held.alive.load(ordering: .relaxed) != 0 { stillHeld += 1 }
            // The next round starts from none alive, whatever this one left.
            while Held.alive.load(ordering: .relaxed) != 0 { await Task.yield() }
        }
        #expect(stillHeld == 0, "\(stillHeld) of 300 returns came while the body still held its object")
    }
}
