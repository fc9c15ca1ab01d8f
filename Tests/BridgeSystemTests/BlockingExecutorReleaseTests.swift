import BridgeSystem
import BridgeTestSupport
import Synchronization
import Testing

/// A finished job's captures are released before its worker takes the pool's lock again. The last reference to an
/// object whose `deinit` queues work on the same pool (the test servers kill their processes that way) once went
/// with the job under the lock, and the `deinit`'s `submit` waited for that lock forever: the worker, and every job
/// queued after it, stopped for good (the unit suite hung at a released `Emulator`).
@Suite struct BlockingExecutorReleaseTests {
    @Test func aDeinitThatQueuesWorkWhenAJobReleasesItRuns() async {
        let executor = BlockingExecutor(name: "release-test")
        let done = Flag()
        do {
            let object = QueuesOnDeinit(executor: executor, done: done)
            executor.submit { withExtendedLifetime(object) {} }  // from here the job holds the only reference
        }
        #expect(await pollUntil(timeout: .seconds(30)) { done.isSet }, "the deinit's job never ran: a worker stuck")
    }
}

/// Set once by the job a `QueuesOnDeinit` queues.
private final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}

/// Queues a job on `executor` from its `deinit`, as `PythonServer` does to kill its process.
private final class QueuesOnDeinit: Sendable {
    let executor: BlockingExecutor
    let done: Flag

    init(executor: BlockingExecutor, done: Flag) {
        self.executor = executor
        self.done = done
    }

    deinit {
        let done = done
        executor.submit { done.set() }
    }
}
