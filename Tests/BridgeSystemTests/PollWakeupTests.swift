import BridgeSystem
import BridgeTestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The wake-up a polling thread polls beside its descriptors (`PollWakeup`): the MQTT client's network thread's.
@Suite struct PollWakeupTests {
    /// Whether `wakeup`'s descriptor is readable now (a poll that does not wait).
    func isReadable(_ wakeup: PollWakeup) -> Bool {
        var entry = pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1
    }

    @Test func ringsAreReadableUntilDrainedAndCountOnce() throws {
        let wakeup = try PollWakeup()
        #expect(!isReadable(wakeup))
        for _ in 0..<100 { wakeup.ring() }
        #expect(isReadable(wakeup))
        wakeup.drain()
        #expect(!isReadable(wakeup), "one drain takes every ring before it")
        wakeup.drain()  // nothing to take: does not block
        #expect(!isReadable(wakeup))
    }

    @Test func aRingFromAnotherThreadEndsAPoll() throws {
        let wakeup = try PollWakeup()
        let thread = try DetachedThread.startJoinable {
            var entry = pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, Int32(300_000 * TestEnvironment.patience))
        }
        wakeup.ring()
        let started = ContinuousClock.now
        thread.join()
        #expect(ContinuousClock.now - started < .seconds(TestEnvironment.patient(60)), "woken, not timed out")
    }
}
