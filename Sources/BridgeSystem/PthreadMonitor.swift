#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A pthread mutex and a condition variable, allocated and initialised together: the guard of a class whose own
/// threads sleep on the condition (`BlockingExecutor`, `DedicatedThreadExecutor`, `ConditionLock`).
///
/// A struct, so the two pointers are stored inline in the owning class and a lock costs what it did with two
/// stored pointers. A struct has no deinit: the owner calls `destroy()` in its own.
struct PthreadMonitor {
    /// The mutex guarding the owner's state.
    let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The condition the owner's threads wait on, with `mutex` held.
    let condition: UnsafeMutablePointer<pthread_cond_t>

    /// Creates both; `pthread_cond_timedwait` deadlines on `condition` are times of `clock`.
    init(clock: clockid_t) {
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, clock)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// Destroys and frees both: once, from the owner's deinit, when no thread uses them any more.
    func destroy() {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }
}
