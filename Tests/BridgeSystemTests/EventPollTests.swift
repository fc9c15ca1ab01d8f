import BridgeSystem
import BridgeTestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The epoll set the webhook delivery driver sleeps in (`EventPoll`), with the eventfd wake-up beside its sockets.
@Suite struct EventPollTests {
    @Test func aRingFromAnotherThreadEndsAWaitWithoutATimeLimit() throws {
        let poll = try EventPoll()
        let wakeup = try PollWakeup()
        try poll.add(wakeup.descriptor, .readable)
        let woken = WokenBy()
        let lent = LentPoll(poll)
        let waiter = try DetachedThread.startJoinable {
            let poll = lent.poll
            // -1: no limit. Only the ring can end this wait (a missed one fails the suite's time limit).
            var seen: [Int32] = []
            while seen.isEmpty { _ = try? poll.wait(timeoutMilliseconds: -1) { fd, _ in seen.append(fd) } }
            woken.set(seen)
        }
        usleep(50_000)  // most likely asleep by now; a ring before the wait is kept by the eventfd anyway
        wakeup.ring()
        waiter.join()
        #expect(woken.value == [wakeup.descriptor])
        wakeup.drain()
        #expect(try poll.wait(timeoutMilliseconds: 0) { _, _ in } == 0, "drained: no longer ready")
    }

    @Test func registrationsAreChangedAndRemovedAndMistakesNamed() throws {
        let poll = try EventPoll()
        var ends: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { for end in ends { close(end) } }
        #expect(throws: SystemError(operation: "epoll_ctl(MOD)", errno: ENOENT)) { try poll.modify(ends[0], .readable) }
        #expect(throws: SystemError(operation: "epoll_ctl(DEL)", errno: ENOENT)) { try poll.remove(ends[0]) }
        try poll.add(ends[0], .readable)
        #expect(throws: SystemError(operation: "epoll_ctl(ADD)", errno: EEXIST)) { try poll.add(ends[0], .writable) }
        var ready: [Int32: EventPoll.Events] = [:]
        #expect(try poll.wait(timeoutMilliseconds: 0) { ready[$0] = $1 } == 0)  // nothing to read yet
        try poll.modify(ends[0], [.readable, .writable])
        #expect(try poll.wait(timeoutMilliseconds: 0) { ready[$0] = $1 } == 1)
        #expect(ready == [ends[0]: .writable])
        var byte: UInt8 = 7
        #expect(write(ends[1], &byte, 1) == 1)
        #expect(try poll.wait(timeoutMilliseconds: 0) { ready[$0] = $1 } == 1)
        #expect(ready == [ends[0]: [.readable, .writable]])
        try poll.remove(ends[0])
        #expect(try poll.wait(timeoutMilliseconds: 0) { _, _ in } == 0)
        close(ends[1])
        ends[1] = -1
        try poll.add(ends[0], .readable)  // the peer hung up: readable (end of stream) and hung up
        ready = [:]
        #expect(try poll.wait(timeoutMilliseconds: 0) { ready[$0] = $1 } == 1)
        #expect(ready[ends[0]]?.contains(.readable) == true && ready[ends[0]]?.contains(.hangUp) == true)
    }
}

/// What the waiting thread saw, read after it was joined.
private final class WokenBy: @unchecked Sendable {
    // @unchecked: written by the waiting thread before `join()` returns, read only after it (join orders them).
    private(set) var value: [Int32] = []
    func set(_ fds: [Int32]) { value = fds }
}

/// The set lent to the waiting thread.
private final class LentPoll: @unchecked Sendable {
    // @unchecked: the test's own thread does not touch the set from the waiter's start until `join()` returns.
    let poll: EventPoll
    init(_ poll: EventPoll) { self.poll = poll }
}
