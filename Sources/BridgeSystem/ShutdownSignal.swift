import Synchronization

/// A one-way "stop now" flag that threads can poll or block on and tasks can wait on.
///
/// The socket reader polls `isTriggered` between reads (at most every 250 ms) to unsubscribe and close cleanly; the
/// reconnect loop and the activity reader `sleep` on it, and threads `pause` on it (a sink runner between retries),
/// so a shutdown never waits out a backoff delay.
public final class ShutdownSignal: Sendable {
    private struct State {
        var triggered = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let flag = Atomic<Bool>(false)
    private let state = Mutex(State())
    /// Whether shutdown was requested, for threads that `pause`. Not an empty value: ThreadSanitizer's access
    /// instrumentation puts a zero-sized stored property at its object's own address, which every thread reads
    /// before it takes the lock, and reported that as a race (docs/RELIABILITY.md "ThreadSanitizer").
    private let threads = ConditionLock(false)

    /// Creates an untriggered signal.
    public init() {}

    /// Whether shutdown was requested.
    public var isTriggered: Bool { flag.load(ordering: .acquiring) }

    /// Requests shutdown and wakes every waiter. Idempotent.
    public func trigger() {
        flag.store(true, ordering: .releasing)
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.triggered = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
        threads.withLock { triggered in
            triggered = true
            threads.broadcast()
        }
    }

    /// Blocks the calling thread for `duration`, returning early when triggered; true if the full time passed.
    /// For threads only (a sink runner's pause between retries): tasks use `sleep(for:)`.
    @discardableResult
    public func pause(for duration: Duration) -> Bool {
        let deadline = ContinuousClock.now + duration
        return threads.wait { triggered -> (result: Bool?, sleep: Duration?) in
            if triggered { return (false, nil) }
            let remaining = deadline - .now
            return remaining > .zero ? (nil, remaining) : (true, nil)
        }
    }

    /// Waits until the signal is triggered (or the task is cancelled).
    public func wait() async {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.triggered || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }

    /// Sleeps for `duration`, returning early when triggered. Returns true if the full time passed.
    @discardableResult
    public func sleep(for duration: Duration) async -> Bool {
        if isTriggered { return false }
        let interrupted = await withTimeLimit(duration) {
            await self.wait()
            return true
        }
        return interrupted == nil && !isTriggered && !Task.isCancelled
    }
}
