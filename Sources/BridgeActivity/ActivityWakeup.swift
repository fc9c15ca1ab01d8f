public import BridgeSystem
public import Synchronization
public import BridgeEvents
public import BridgeDirectus

/// Wakes the activity reader: the socket reader calls it (`ActivityTrigger`) when an event arrives for a
/// subscription in activity mode or when a connection is established; the reader waits on it between reads.
///
/// Wake-ups coalesce: however many events arrive while the reader is busy, it reads once more afterwards.
public final class ActivityWakeup: ActivityTrigger, Sendable {
    private struct State {
        package var pending = false
        package var reconnected = false
        package var waiter: CheckedContinuation<Void, Never>?
    }

    /// What happened since the reader last looked.
    public struct Signal: Sendable, Equatable {
        /// A change was seen (or a connection established): read now.
        public var pending: Bool
        /// A connection was established: what follows is catching up (origin `backfill`).
        public var reconnected: Bool
    }

    private let state = Mutex(State())

    /// Creates a wake-up with nothing pending.
    public init() {}

    public func changeSeen(collection: String) {
        wake { $0.pending = true }
    }

    public func socketReconnected() {
        wake {
            $0.pending = true
            $0.reconnected = true
        }
    }

    /// Takes (and clears) what happened since the last call.
    public func take() -> Signal {
        state.withLock { state in
            defer {
                state.pending = false
                state.reconnected = false
            }
            return Signal(pending: state.pending, reconnected: state.reconnected)
        }
    }

    /// Whether a wake-up is pending.
    public var isPending: Bool { state.withLock { $0.pending } }

    /// Returns when a wake-up is pending, `timeout` passed, `stop` was triggered or the task was cancelled.
    public func wait(timeout: Duration, stop: ShutdownSignal) async {
        if isPending || stop.isTriggered { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForWakeUp() }
            group.addTask { await stop.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForWakeUp() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled { return true }
                    state.waiter?.resume()  // one reader waits at a time; never strand an older waiter
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
    }

    private func wake(_ change: (inout State) -> Void) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            change(&state)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
