import BridgeSystem
import BridgeTestSupport
import Synchronization
import Testing

/// The bridge's one wake-up primitive (`Wakeup`), its one race of work against a timer (`withTimeLimit`) and its
/// threads that are waited for (`DetachedThread.startJoinable`).
@Suite struct WakeupTests {
    /// Long enough that a test passing by timing out instead of by the event it waits for is seen as a failure.
    static let forever: Duration = .seconds(Int64(300 * TestEnvironment.patience))

    @Test func aRingBeforeTheWaitIsRememberedAndConsumedOnce() async {
        let wakeup = Wakeup()
        wakeup.ring()
        wakeup.ring()  // coalesced with the first
        let started = ContinuousClock.now
        await wakeup.wait(timeout: Self.forever)
        #expect(ContinuousClock.now - started < .seconds(TestEnvironment.patient(20)))
        // Consumed: the next wait times out (short timeout, so the test does not wait long either way).
        let timedOut = await withTimeLimit(.seconds(Int64(60 * TestEnvironment.patience))) {
            await wakeup.wait(timeout: .milliseconds(50))
            return true
        }
        #expect(timedOut == true)
    }

    @Test func aRingFromAnotherThreadWakesTheWaiter() async throws {
        let wakeup = Wakeup()
        let waiting = Atomic<Bool>(false)
        async let woken: Void = {
            waiting.store(true, ordering: .releasing)
            await wakeup.wait(timeout: Self.forever)
        }()
        while !waiting.load(ordering: .acquiring) { await Task.yield() }
        try DetachedThread.start(stackSize: nil) { wakeup.ring() }
        let started = ContinuousClock.now
        await woken
        #expect(ContinuousClock.now - started < .seconds(Int64(60 * TestEnvironment.patience)))
    }

    @Test func aCancelledOrStoppedWaitReturnsAtOnce() async {
        let wakeup = Wakeup()
        let stop = ShutdownSignal()
        async let stopped: Void = wakeup.wait(timeout: Self.forever, until: stop)
        stop.trigger()
        await stopped
        let cancelled = Task { await wakeup.wait(timeout: Self.forever) }
        cancelled.cancel()
        await cancelled.value
        // A cleared ring is forgotten: the wait that follows times out.
        wakeup.ring()
        wakeup.clear()
        let returned = await withTimeLimit(.seconds(Int64(60 * TestEnvironment.patience))) {
            await wakeup.wait(timeout: .milliseconds(20), until: ShutdownSignal())
            return true
        }
        #expect(returned == true)
    }

    @Test func aWaitWithoutATimerEndsOnlyWithARingOrTheStop() async throws {
        let wakeup = Wakeup()
        let stop = ShutdownSignal()
        // Neither rung nor stopped: still waiting when a time limit gives up on it.
        let quiet = await withTimeLimit(.milliseconds(200)) {
            await wakeup.wait(until: stop)
            return true
        }
        #expect(quiet == nil)
        let waiting = Atomic<Bool>(false)
        async let rung: Void = {
            waiting.store(true, ordering: .releasing)
            await wakeup.wait(until: stop)
        }()
        while !waiting.load(ordering: .acquiring) { await Task.yield() }
        try DetachedThread.start(stackSize: nil) { wakeup.ring() }
        let started = ContinuousClock.now
        await rung
        #expect(ContinuousClock.now - started < .seconds(Int64(60 * TestEnvironment.patience)))
        async let stopped: Void = wakeup.wait(until: stop)
        stop.trigger()
        await stopped
    }

    @Test func aTimeLimitReturnsTheResultOrNilAndCancelsTheWork() async {
        #expect(await withTimeLimit(Self.forever) { 42 } == 42)
        let sawCancellation = Atomic<Bool>(false)
        let late: Int? = await withTimeLimit(.milliseconds(20)) {
            try? await Task.sleep(for: Self.forever)
            sawCancellation.store(Task.isCancelled, ordering: .relaxed)
            return 1
        }
        let cancelled = sawCancellation.load(ordering: .relaxed)
        #expect(late == nil)
        #expect(cancelled)
    }

    @Test func aJoinableThreadIsJoinedAfterItsBodyReturned() throws {
        let ran = Atomic<Bool>(false)
        let thread = try DetachedThread.startJoinable { ran.store(true, ordering: .releasing) }
        thread.join()
        let finished = ran.load(ordering: .acquiring)
        #expect(finished)
    }
}
