package import BridgeSystem
package import Synchronization
package import BridgeEvents

/// Wakes one waiting task: rings from any thread (new outbox rows, a finished attempt, shutdown) are remembered
/// until the waiter takes them, so a ring that comes before `wait` is never lost.
package final class Doorbell: Sendable {
    private struct State {
        package var rung = false
        package var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())
    private let timer: DedicatedThreadExecutor?

    /// Creates a quiet doorbell. With `timer`, timed waits use that executor's timer instead of a sleeping task
    /// (the waiter must then run on that executor's thread).
    package init(timer: DedicatedThreadExecutor? = nil) {
        self.timer = timer
    }

    /// Wakes the waiter, or makes the next `wait` return at once.
    package func ring() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.rung = true
            return nil
        }
        waiter?.resume()
    }

    /// Waits until a ring or until `timeout` passed, and consumes the ring. One waiter at a time.
    ///
    /// Always suspends at least once (a yield when already rung): on a single-thread executor the tasks that ring
    /// run only while the waiter is suspended.
    package func wait(timeout: Duration) async {
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
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // The timer only rings: the waiter below is the one place that resumes.
                if (try? await Task.sleep(for: timeout)) != nil { self.ring() }
            }
            await waitForRing()
            group.cancelAll()
        }
    }

    private func waitForRing() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.rung {
                    state.rung = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    private func takeRing() -> Bool {
        state.withLock { state in
            defer { state.rung = false }
            return state.rung
        }
    }
}
