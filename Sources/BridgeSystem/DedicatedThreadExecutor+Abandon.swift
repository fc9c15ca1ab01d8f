import Synchronization

extension DedicatedThreadExecutor {
    /// Runs `body` as one task on this executor's thread and returns its result; a cancelled caller stops waiting
    /// for it: `CancellationError` is thrown at once and the task is left to finish on its own. The thread ends
    /// once `body` returned.
    ///
    /// For a long-lived loop that may block in a C call nothing interrupts (a sink runner's `write(2)` to a pipe
    /// whose reader stopped reading): the forced phase of a shutdown must end even then, and the process exits with
    /// that thread still blocked. That is why `body` runs as a task of its own rather than a child of the caller
    /// (a child would hold its task group until it returned); the caller's cancellation is the cue to make `body`
    /// return (a sink runner's `abandon`).
    public func runAbandoningOnCancel<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T
    {
        let slot = ResultSlot<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let cancelled = slot.waiter.withLock { slot -> Bool in
                    if Task.isCancelled { return true }
                    slot = continuation
                    return false
                }
                if cancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                Task(executorPreference: self) {
                    let result: Result<T, any Error>
                    do {
                        result = .success(try await body())
                    } catch {
                        result = .failure(error)
                    }
                    self.shutdown()
                    slot.waiter.withLock { $0.take() }?.resume(with: result)
                }
            }
        } onCancel: {
            slot.waiter.withLock { $0.take() }?.resume(throwing: CancellationError())
        }
    }
}

/// The caller waiting for an abandonable task's result, until the result or the caller's cancellation takes it.
private final class ResultSlot<T: Sendable>: Sendable {
    let waiter = Mutex<CheckedContinuation<T, any Error>?>(nil)
}
