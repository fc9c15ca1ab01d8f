import Synchronization

/// Wakes one waiting task: rings from any thread (new outbox rows, a finished attempt, a change seen on the socket)
/// are remembered until the waiter takes them, so a ring that comes before the wait is never lost; many rings while
/// the waiter is busy wake it once.
///
/// The one wake-up primitive of the bridge: the webhook delivery loop waits on it for work, the activity reader and
/// the sort watcher for a change (`ActivityWakeup`), a webhook sink with shared state for its outbox to empty, the
/// lease keeper's waiters for a change of role, the token refresher for a requested renewal, the live benchmark for
/// the connection (`HealthState.changed`).
public final class Wakeup: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())
    private let timer: DedicatedThreadExecutor?

    /// Creates a quiet wake-up. With `timer`, timed waits use that executor's timer instead of a sleeping task
    /// (the waiter must then run on that executor's thread).
    public init(timer: DedicatedThreadExecutor? = nil) {
        self.timer = timer
    }

    /// Wakes the waiter, or makes the next wait return at once.
    public func ring() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.rung = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Forgets a ring nobody waited for (its news was taken another way).
    public func clear() {
        state.withLock { $0.rung = false }
    }

    /// Waits until a ring or until `timeout` passed, and consumes the ring. One waiter at a time.
    ///
    /// Always suspends at least once (a yield when already rung): on a single-thread executor the tasks that ring
    /// run only while the waiter is suspended.
    public func wait(timeout: Duration) async {
        if takeRing() || timeout <= .zero {
            await Task.yield()
            return
        }
        if let timer {
            timer.setTimer(after: timeout) { [self] in ring() }
            await waitForRing()
            timer.setTimer(after: .zero, nil)
            return
        }
        _ = await withTimeLimit(timeout) { await self.waitForRing() }
    }

    /// Returns when rung (consuming the ring), `timeout` passed, `stop` was triggered or the task was cancelled.
    public func wait(timeout: Duration, until stop: ShutdownSignal) async {
        if takeRing() || stop.isTriggered { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForRing() }
            group.addTask { await stop.sleep(for: timeout) }  // the caller's deadline: a real timer
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns when rung (consuming the ring), `stop` was triggered or the task was cancelled: no timer at all, for
    /// a waiter whose news always comes as a ring.
    public func wait(until stop: ShutdownSignal) async {
        if takeRing() || stop.isTriggered { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForRing() }
            group.addTask { await stop.wait() }
            await group.next()
            group.cancelAll()
        }
    }

    /// Waits for a ring and consumes it; returns at once when cancelled.
    private func waitForRing() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.rung || Task.isCancelled {
                        state.rung = false
                        return true
                    }
                    state.waiter?.resume()  // one waiter at a time; never strand an older one
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }?.resume()
        }
        // A ring that resumed the waiter is consumed here: it was set before the resume.
        _ = takeRing()
    }

    private func takeRing() -> Bool {
        state.withLock { state in
            defer { state.rung = false }
            return state.rung
        }
    }
}
