package import BridgeHTTP
package import Synchronization
package import BridgeEvents
package import BridgeSystem

extension WebhookDeliveryService {
    /// The loop's state between turns.
    package struct Loop {
        package var state: WebhookDeliveryState
        /// Outcomes not committed yet, the items they free, and when the oldest arrived.
        package var writes: [OutboxWrite] = []
        package var uncommittedItems: Set<Int64> = []
        package var uncommittedSince: ContinuousClock.Instant?
        /// Read outbox rows above this id in the next store step (nil: no read needed); always `scannedSeq`.
        package var loadAfter: Int64? = 0
        /// Every row of the sink with a `seq` up to this one was read from SQLite or handed over in memory.
        package var scannedSeq: Int64 = 0
        /// Rows the hand-off did not bring are being read from SQLite (at start, after a refused batch): what it
        /// brings meanwhile is dropped (read from SQLite in its turn), so no row overtakes an earlier one.
        package var catchingUp = true
        package var recount = true
        package var nextPoll: ContinuousClock.Instant
        package var drainDeadline: ContinuousClock.Instant?
        package var abandoned = false
        package var storeFailing = false
        /// Delays before the outbox is tried again after a failed turn: 1 s, growing to 10 s while it keeps failing
        /// (a new row or a finished attempt still rings the loop sooner).
        package var storeRetries = Backoff(initialDelay: .seconds(1), maxDelay: .seconds(10))
        package var receiverFailing = false
        /// Shared state: the last poll for replayed dead letters failed (logged once until one succeeds).
        package var replaysFailing = false
        /// Event ids of attempts handed to the engine's batch interface, by outbox row.
        package var submitted: [Int64: String] = [:]

        /// How long to sleep when nothing happens: until the next due row (when a slot is free: with every slot
        /// taken only a finished attempt, which rings, can start the next), the next poll or the drain deadline.
        package func waitTime(now: Int64, maxInFlight: Int, commitDelay: Duration) -> Duration {
            var wait = nextPoll - .now
            if let since = uncommittedSince { wait = min(wait, since + commitDelay - .now) }
            if drainDeadline == nil, state.inFlightCount < maxInFlight, let due = state.nextDueAt {
                wait = min(wait, .milliseconds(max(0, due - now)))
            }
            if let deadline = drainDeadline { wait = min(wait, abandoned ? .milliseconds(50) : deadline - .now) }
            return max(wait, .zero)
        }
    }
}

/// Finished engine attempts waiting for the delivery loop (filled on the engine's driver thread).
package final class CompletionInbox: Sendable {
    package let list = Mutex<[DeliveryReceiver.Completion]>([])
}
