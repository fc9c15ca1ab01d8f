internal import CLinux

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Wakes a thread that waits in `poll(2)` or `epoll_wait(2)` on its descriptors: an eventfd it watches beside them
/// (`descriptor`, readable after a ring until `drain`). Rings from any thread before the drain count once.
///
/// `Wakeup` is for a waiting task and `ConditionLock` for a thread that waits on nothing else; this is for a thread
/// that must also wake for its descriptors: the webhook delivery driver (curl's sockets, `EventPoll`), the MQTT
/// client's network thread (its socket) and the tests' helper servers' output reader (their pipes, `ServerOutput` in
/// Tests/BridgeTestSupport).
package final class PollWakeup: Sendable {
    /// The eventfd, to watch for readability. Owned: closed in deinit.
    package let descriptor: Int32

    /// Creates a quiet wake-up; throws when the process is out of descriptors.
    package init() throws(SystemError) {
        // Non-blocking: a drain when nothing rang returns at once (a ring cannot block: the counter would have to
        // reach 2^64 - 2 first).
        let descriptor = clinux_eventfd()
        guard descriptor >= 0 else { throw SystemError(operation: "eventfd", errno: errno) }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Makes `descriptor` readable.
    package func ring() {
        var one: UInt64 = 1
        _ = write(descriptor, &one, MemoryLayout<UInt64>.size)
    }

    /// Consumes every ring so far (the waiting thread, after it saw `descriptor` readable): one read resets the
    /// counter, however many rang.
    package func drain() {
        var count: UInt64 = 0
        _ = read(descriptor, &count, MemoryLayout<UInt64>.size)
    }
}
