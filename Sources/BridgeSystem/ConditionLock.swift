#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A value guarded by a pthread mutex, with a condition variable to wait on it: for a thread of its own that
/// sleeps until other threads change the value (a publisher's driver thread woken by acknowledgements).
///
/// Tasks use `withLock` only (it never waits); `wait(until:)` is for real threads, never the cooperative pool.
package final class ConditionLock<Value>: @unchecked Sendable {
    // @unchecked: `value` is read and written only between pthread_mutex_lock and pthread_mutex_unlock of
    // `monitor.mutex` (withLock and wait); the mutex and condition are owned by this object and destroyed in deinit.
    private let monitor = PthreadMonitor(clock: CLOCK_MONOTONIC)  // deadlines ignore wall-clock jumps
    private var value: Value

    /// Guards `value`.
    package init(_ value: Value) {
        self.value = value
    }

    deinit {
        monitor.destroy()
    }

    /// Runs `body` with the value locked.
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        pthread_mutex_lock(monitor.mutex)
        defer { pthread_mutex_unlock(monitor.mutex) }
        return try body(&value)
    }

    /// Wakes the waiting thread (call after changing the value).
    package func signal() { pthread_cond_signal(monitor.condition) }

    /// Wakes every waiting thread.
    package func broadcast() { pthread_cond_broadcast(monitor.condition) }

    /// With the lock held: runs `body`; when it returns a delay, sleeps that long (nil: until signalled; .zero: not
    /// at all) and runs it again; returns `body`'s result once it gives one. Spurious wake-ups just run `body` again.
    package func wait<T>(_ body: (inout Value) -> (result: T?, sleep: Duration?)) -> T {
        pthread_mutex_lock(monitor.mutex)
        defer { pthread_mutex_unlock(monitor.mutex) }
        while true {
            let (result, sleep) = body(&value)
            if let result { return result }
            guard let sleep else {
                pthread_cond_wait(monitor.condition, monitor.mutex)
                continue
            }
            guard sleep > .zero else { continue }
            var deadline = timespec()
            clock_gettime(CLOCK_MONOTONIC, &deadline)
            let nanoseconds = Int64(deadline.tv_nsec) + min(sleep.wholeNanoseconds, 3_600_000_000_000)
            deadline.tv_sec += Int(nanoseconds / 1_000_000_000)
            deadline.tv_nsec = Int(nanoseconds % 1_000_000_000)
            _ = pthread_cond_timedwait(monitor.condition, monitor.mutex, &deadline)
        }
    }

    /// Waits until `condition` holds (checked with the lock held, again after each signal) or `deadline` passes;
    /// whether it held.
    package func wait(until deadline: ContinuousClock.Instant, for condition: (Value) -> Bool) -> Bool {
        wait { value in
            if condition(value) { return (true, nil) }
            let left = deadline - .now
            return left > .zero ? (nil, left) : (false, nil)
        }
    }
}
