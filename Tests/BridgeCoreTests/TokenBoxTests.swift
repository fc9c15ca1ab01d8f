import BridgeDirectus
import BridgeSystem
import BridgeTestSupport
import Synchronization
import Testing

/// The token refresher's wait (`TokenBox.waitForRenewalRequest`): a request from another thread (the socket's
/// TOKEN_EXPIRED) wakes it at once, the scheduled renewal's deadline is its only timer, and the stop ends it.
@Suite struct TokenBoxTests {
    let patience = Duration.seconds(Int64(60 * TestEnvironment.patience))

    @Test func aRequestWakesTheWaitAndIsTakenOnce() async throws {
        let box = TokenBox()
        let stop = ShutdownSignal()
        let waiting = Atomic<Bool>(false)
        async let woken: Void = {
            waiting.store(true, ordering: .releasing)
            await box.waitForRenewalRequest(until: nil, stop: stop)
        }()
        while !waiting.load(ordering: .acquiring) { await Task.yield() }
        try DetachedThread.start(stackSize: nil) { box.requestRenewal() }
        let started = ContinuousClock.now
        await woken
        #expect(ContinuousClock.now - started < patience)
        #expect(box.takeRenewalRequest())
        #expect(!box.takeRenewalRequest())
    }

    @Test func withoutARequestOnlyTheDeadlineOrTheStopEndsTheWait() async {
        let box = TokenBox()
        let stop = ShutdownSignal()
        #expect(await withTimeLimit(.milliseconds(200)) { await box.waitForRenewalRequest(until: nil, stop: stop) } == nil)
        let started = ContinuousClock.now
        await box.waitForRenewalRequest(until: started + .milliseconds(100), stop: stop)
        #expect(ContinuousClock.now - started >= .milliseconds(100))
        #expect(!box.takeRenewalRequest())
        async let stopped: Void = box.waitForRenewalRequest(until: nil, stop: stop)
        stop.trigger()
        await stopped
    }
}
