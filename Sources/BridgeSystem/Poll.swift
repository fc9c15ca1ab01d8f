#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The readiness conditions `Poll.wait` can wait for.
public struct PollEvents: OptionSet, Sendable {
    /// The `poll(2)` event bits.
    public let rawValue: Int16
    /// Creates a set from `poll(2)` event bits.
    public init(rawValue: Int16) { self.rawValue = rawValue }
    /// Data (or end of stream) can be read without blocking.
    public static let readable = PollEvents(rawValue: Int16(POLLIN))
    /// Data can be written without blocking.
    public static let writable = PollEvents(rawValue: Int16(POLLOUT))
}

/// Waiting for one file descriptor with `poll(2)`, bounded by a deadline.
public enum Poll {
    /// Waits until `fd` is ready for `events` or `deadline` passes.
    ///
    /// Returns `true` when the descriptor is ready. Error and hang-up conditions count as ready: the next
    /// `read`/`write` reports them with the right errno. Returns `false` on timeout. `EINTR` restarts the wait
    /// with the time that is left.
    public static func wait(
        fd: Int32,
        for events: PollEvents,
        until deadline: ContinuousClock.Instant
    ) throws(SystemError) -> Bool {
        while true {
            var entry = pollfd(fd: fd, events: events.rawValue, revents: 0)
            let result = poll(&entry, 1, milliseconds(until: deadline))
            if result > 0 { return true }
            if result == 0 {
                // poll rounds the timeout up to whole milliseconds; a wake-up just before the deadline loops once.
                if ContinuousClock.now >= deadline { return false }
                continue
            }
            let code = errno
            if code == EINTR { continue }
            throw SystemError(operation: "poll", errno: code)
        }
    }

    /// The `poll(2)` timeout for `deadline`: rounded up so the wait never ends early, 0 when it has passed.
    public static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let remaining = deadline - ContinuousClock.now
        if remaining <= .zero { return 0 }
        let (seconds, attoseconds) = remaining.components
        let millis = seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: millis)
    }
}
