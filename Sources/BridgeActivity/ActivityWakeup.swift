public import BridgeSystem
internal import Synchronization
internal import BridgeEvents
public import BridgeDirectus

/// Wakes the activity reader: the socket reader calls it (`ActivityTrigger`) when an event arrives for a
/// subscription in activity mode or when a connection is established; the reader waits on it between reads.
///
/// Wake-ups coalesce: however many events arrive while the reader is busy, it reads once more afterwards.
public final class ActivityWakeup: ActivityTrigger, Sendable {
    private struct State {
        var pending = false
        var reconnected = false
    }

    /// What happened since the reader last looked.
    public struct Signal: Sendable, Equatable {
        /// A change was seen (or a connection established): read now.
        public var pending: Bool
        /// A connection was established: what follows is catching up (origin `backfill`).
        public var reconnected: Bool
    }

    private let state = Mutex(State())
    private let wakeup = Wakeup()

    /// Creates a wake-up with nothing pending.
    public init() {}

    public func changeSeen(collection: String) {
        state.withLock { $0.pending = true }
        wakeup.ring()
    }

    public func socketReconnected() {
        state.withLock { state in
            state.pending = true
            state.reconnected = true
        }
        wakeup.ring()
    }

    /// Takes (and clears) what happened since the last call.
    public func take() -> Signal {
        let signal = state.withLock { state in
            defer {
                state.pending = false
                state.reconnected = false
            }
            return Signal(pending: state.pending, reconnected: state.reconnected)
        }
        // Taken here: the next `wait` waits for news after this (a change seen meanwhile sets `pending` again).
        wakeup.clear()
        return signal
    }

    /// Whether a wake-up is pending.
    public var isPending: Bool { state.withLock { $0.pending } }

    /// Returns when a wake-up is pending, `timeout` passed, `stop` was triggered or the task was cancelled.
    public func wait(timeout: Duration, stop: ShutdownSignal) async {
        if isPending || stop.isTriggered { return }
        await wakeup.wait(timeout: timeout, until: stop)
    }
}
