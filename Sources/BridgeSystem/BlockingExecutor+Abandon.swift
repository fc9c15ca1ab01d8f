import Synchronization

extension BlockingExecutor {
    /// Runs `body` on a pool thread like `perform`, but a cancelled caller stops waiting for it: `CancellationError`
    /// is thrown at once and the thread is left to finish on its own.
    ///
    /// For work that may block in a C call nothing interrupts (a write to a pipe whose reader stopped reading):
    /// the forced phase of a shutdown must end even then, and the process exits with that thread still blocked.
    public func performAbandoningOnCancel<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let slot = Mutex<CheckedContinuation<T, any Error>?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let cancelled = slot.withLock { slot -> Bool in
                    if Task.isCancelled { return true }
                    slot = continuation
                    return false
                }
                if cancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                submit {
                    let result = Result { try body() }
                    slot.withLock { $0.take() }?.resume(with: result)
                }
            }
        } onCancel: {
            slot.withLock { $0.take() }?.resume(throwing: CancellationError())
        }
    }
}
