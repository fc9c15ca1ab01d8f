import BridgeSystem
import Glibc
import Synchronization
import Testing

/// When the system refuses a thread (the process's thread limit), nothing traps and no work is stranded
/// (docs/RELIABILITY.md, "Wire numbers and traps: audit"). These used to be `precondition(result == 0)`.
@Suite struct ThreadStartFailureTests {
    /// A starter that refuses every thread, as `pthread_create` does at the limit.
    static let refusing: DetachedThread.Starter = { _ throws(SystemError) in
        throw SystemError(operation: "starting a thread (pthread_create)", errno: EAGAIN)
    }

    /// A real refusal: a stack larger than the address space cannot be mapped, so `pthread_create` fails (after
    /// the EAGAIN retries) and the failure is thrown and counted, not trapped.
    @Test func aThreadTheSystemCannotStartIsAnErrorAndCounted() async throws {
        let before = DetachedThread.startFailures
        let ran = SharedCount()
        // On a pool thread: the retries pause 111 ms in all, which a cooperative thread must not spend blocked.
        let outcome = try await BlockingExecutor.shared.perform {
            Result { () throws(SystemError) in
                try DetachedThread.start(stackSize: 1 << 50) { ran.value.add(1, ordering: .relaxed) }
            }
        }
        #expect {
            try outcome.get()
        } throws: { error in
            (error as? SystemError).map { $0.errno == EAGAIN && $0.isRetriable } ?? false
        }
        let after = DetachedThread.startFailures
        #expect(after > before)
        let runs = ran.value.load(ordering: .relaxed)
        #expect(runs == 0)
    }

    @Test func aStartedThreadRunsItsBody() async throws {
        let done = SharedCount()
        try DetachedThread.start(stackSize: nil) { done.value.add(1, ordering: .relaxed) }
        try await waitUntil { done.value.load(ordering: .relaxed) > 0 }
        let runs = done.value.load(ordering: .relaxed)
        #expect(runs == 1)
    }

    @Test func performThrowsWhenNoThreadCanRunTheJob() async {
        let executor = BlockingExecutor(name: "refused", threadStarter: Self.refusing)
        await #expect {
            try await executor.perform { 42 }
        } throws: { error in
            (error as? SystemError)?.errno == EAGAIN
        }
    }

    /// Executor jobs must run (a suspended task has nowhere else to go): they move to a Dispatch worker.
    @Test func executorJobsStillRunWithoutAThread() async {
        let blocking = BlockingExecutor(name: "refused", threadStarter: Self.refusing)
        let dedicated = DedicatedThreadExecutor(name: "refused", threadStarter: Self.refusing)
        let first = await Task(executorPreference: blocking) { 1 }.value
        let second = await Task(executorPreference: dedicated) { 2 }.value
        #expect(first + second == 3)
        dedicated.shutdown()
    }

    /// With one worker running, a job whose own thread was refused waits for that worker instead.
    @Test func aRefusedThreadLeavesItsJobToARunningWorker() async throws {
        let starts = SharedCount()
        let executor = BlockingExecutor(name: "one-thread", idleTimeoutSeconds: 1) { body throws(SystemError) in
            guard starts.value.add(1, ordering: .relaxed).newValue == 1 else {
                throw SystemError(operation: "starting a thread (pthread_create)", errno: EAGAIN)
            }
            try DetachedThread.start(stackSize: nil, body)
        }
        let released = SharedCount()
        async let first: Int = executor.perform {
            while released.value.load(ordering: .relaxed) == 0 { usleep(1_000) }
            return 1
        }
        try await waitUntil { starts.value.load(ordering: .relaxed) >= 1 }
        async let second: Int = executor.perform { 2 }
        try await waitUntil { starts.value.load(ordering: .relaxed) >= 2 }
        released.value.store(1, ordering: .relaxed)
        #expect(try await first + second == 3)
        let startCount = starts.value.load(ordering: .relaxed)
        #expect(startCount == 2)
    }

    /// Polls `condition` for up to 10 s by awaiting, never by blocking: a cooperative thread stuck in `usleep`
    /// would starve every other test of the run.
    private func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<10_000 where !condition() { try await Task.sleep(for: .milliseconds(1)) }
    }
}
