#if canImport(Glibc)
    @preconcurrency package import Glibc
#endif

/// A pthread mutex and a condition variable, allocated and initialised together: the one lock type of the classes
/// that guard their state with a plain pthread mutex (`BlockingExecutor`, `DedicatedThreadExecutor`, `ConditionLock`,
/// `EventQueue`, `OutboxStore`) rather than `Synchronization.Mutex` — on Linux a priority-inheritance futex whose
/// contended path spins in the kernel (`rt_mutex`), measured as a large share of the webhook benchmark's CPU.
///
/// A struct, so the two pointers are stored inline in the owning class and a lock costs what it did with two
/// stored pointers. A struct has no deinit: the owner calls `destroy()` in its own.
package struct PthreadMonitor {
    /// The mutex guarding the owner's state.
    package let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The condition the owner's threads wait on, with `mutex` held.
    package let condition: UnsafeMutablePointer<pthread_cond_t>

    /// Creates both; `pthread_cond_timedwait` deadlines on `condition` are times of `clock`.
    package init(clock: clockid_t) {
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
    package func destroy() {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }
}
