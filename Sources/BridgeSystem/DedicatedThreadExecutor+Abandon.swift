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
    ///
    /// `body`, and whatever it holds, is released before the caller resumes: a process that exits as soon as this
    /// returns must not exit with the body's objects (a sink and its database) still referenced on this thread.
    public func runAbandoningOnCancel<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T
    {
        let slot = ResultSlot<T>()
        let work = AbandonableWork(body)
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
                    let result = await work.run()
                    self.shutdown()
                    slot.waiter.withLock { $0.take() }?.resume(with: result)
                }
            }
        } onCancel: {
            slot.waiter.withLock { $0.take() }?.resume(throwing: CancellationError())
        }
    }
}

/// The body of an abandonable task, let go of as soon as it returned: the task's own closure keeps only this box.
private final class AbandonableWork<T: Sendable>: Sendable {
    private let body: Mutex<(@Sendable () async throws -> T)?>

    init(_ body: @escaping @Sendable () async throws -> T) {
        self.body = Mutex(body)
    }

    /// Runs the body once and releases it before returning its result.
    func run() async -> Result<T, any Error> {
        var body = self.body.withLock { $0.take() }
        let result: Result<T, any Error>
        do {
            guard let run = body else { throw CancellationError() }  // run twice: never, the task runs it once
            result = .success(try await run())
        } catch {
            result = .failure(error)
        }
        body = nil
        return result
    }
}

/// The caller waiting for an abandonable task's result, until the result or the caller's cancellation takes it.
private final class ResultSlot<T: Sendable>: Sendable {
    let waiter = Mutex<CheckedContinuation<T, any Error>?>(nil)
}
