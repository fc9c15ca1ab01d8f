#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Wakes a thread that waits in `poll(2)` on its descriptors: a pipe whose read end it polls beside them
/// (`descriptor`, readable after a ring until `drain`). Rings from any thread before the drain count once.
///
/// `Wakeup` is for a waiting task and `ConditionLock` for a thread that waits on nothing else; this is for a thread
/// that must also wake for its descriptors: the MQTT client's network thread (its socket) and the tests' helper
/// servers' output reader (their pipes, `ServerOutput` in Tests/BridgeTestSupport).
package final class PollWakeup: Sendable {
    /// The read end, to poll for `POLLIN`. Both ends are owned: closed in deinit.
    package let descriptor: Int32
    private let writeEnd: Int32

    /// Creates a quiet wake-up; throws when the process is out of descriptors.
    package init() throws(SystemError) {
        var ends: [Int32] = [-1, -1]
        guard Glibc.pipe(&ends) == 0 else { throw SystemError(operation: "pipe", errno: errno) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            // Neither end blocks: a ring into a full pipe (it is readable then anyway) and a drain of an empty one
            // both return at once.
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        descriptor = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(descriptor)
        close(writeEnd)
    }

    /// Makes `descriptor` readable.
    package func ring() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Consumes every ring so far (the polling thread, after `poll` said `descriptor` is readable).
    package func drain() {
        var bytes = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &bytes, { read(descriptor, $0.baseAddress, $0.count) }) == 64 {}
    }
}
