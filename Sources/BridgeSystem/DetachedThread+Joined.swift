extension DetachedThread {
    /// A thread started by `startJoinable`, which its owner waits for when it stops it.
    package final class Joinable: Sendable {
        private let finished = ConditionLock(false)

        fileprivate init() {}

        fileprivate func markFinished() {
            finished.withLock { $0 = true }
            finished.broadcast()
        }

        /// Blocks the calling thread until the thread's body returned (`pthread_join` without a joinable thread).
        package func join() {
            finished.wait { done in done ? (true, nil) : (nil, nil) }
        }

        /// Blocks the calling thread until the thread's body returned or `deadline` passed; whether it returned.
        package func join(until deadline: ContinuousClock.Instant) -> Bool {
            finished.wait(until: deadline) { $0 }
        }
    }

    /// Runs `body` on a new thread, like `start`, for an owner that must know when it ended (a poll loop whose
    /// handle is destroyed after it): the same EAGAIN retry and failure metric, then `join()` on the result.
    package static func startJoinable(_ body: @escaping @Sendable () -> Void) throws(SystemError) -> Joinable {
        let thread = Joinable()
        try start(stackSize: nil) {
            body()
            thread.markFinished()
        }
        return thread
    }
}
