import Synchronization

/// Wakes one waiting task: rings from any thread (new outbox rows, a finished attempt, shutdown) are remembered
/// until the waiter takes them, so a ring that comes before `wait` is never lost.
package final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// Creates a quiet doorbell.
    package init() {}

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
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // The timer only rings: the waiter below is the one place that resumes.
                if (try? await Task.sleep(for: timeout)) != nil { self.ring() }
            }
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
            group.cancelAll()
        }
    }

    private func takeRing() -> Bool {
        state.withLock { state in
            defer { state.rung = false }
            return state.rung
        }
    }
}
