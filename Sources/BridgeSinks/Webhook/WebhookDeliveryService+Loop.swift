package import BridgeHTTP
package import Synchronization
internal import BridgeEvents
package import BridgeSystem

extension WebhookDeliveryService {
    /// The loop's state between turns.
    package struct Loop {
        package var state: WebhookDeliveryState
        /// Outcomes not handed to the writer yet, the items they free, and when the oldest arrived.
        package var writes: [OutboxWrite] = []
        package var uncommittedItems: Set<Int64> = []
        package var uncommittedSince: ContinuousClock.Instant?
        /// Outcomes handed to the writer and not committed yet, in ticket order.
        package var handedOver: [HandedOver] = []
        /// Due rows held back until the writer committed their item's previous outcome (`ticket`).
        package var parked: [(seq: Int64, ticket: UInt64)] = []
        /// Read outbox rows above this id in the next store step (nil: no read needed); always `scannedSeq`.
        package var loadAfter: Int64? = 0
        /// Why the next store step reads rows (`loadAfter` set): reported with the read (`OutboxReadTally`).
        package var readCauses: OutboxReadCause = .start
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
        /// A line per dead letter, up to 10 in 10 s; the rest as a total (a receiver answering 410 to everything).
        package var deadLetterLog = LogBurstLimit()
        /// Event ids of attempts handed to the engine's batch interface, by outbox row.
        package var submitted: [Int64: String] = [:]
        /// An empty list with capacity, traded for the engine's finished attempts each turn (`turn`).
        package var spareCompletions: [DeliveryReceiver.Completion] = []

        /// One hand-over to the writer: its ticket, the rows it removes and the items it frees.
        package struct HandedOver {
            package var ticket: UInt64
            package var removed: [Int64]
            package var items: Set<Int64>
        }

        /// Hands the outcomes not handed over yet to `writer` (one ticket).
        package mutating func handOver(to writer: OutboxWriter) {
            guard !writes.isEmpty else { return }
            let ticket = writer.submit(writes)
            handedOver.append(
                HandedOver(ticket: ticket, removed: writes.filter(\.removesRow).map(\.seq), items: uncommittedItems))
            writes.removeAll(keepingCapacity: true)
            uncommittedItems.removeAll(keepingCapacity: true)
            uncommittedSince = nil
        }

        /// Forgets the hand-overs the writer committed (up to ticket `committed`).
        package mutating func settle(committed: UInt64) {
            guard let first = handedOver.first, first.ticket <= committed else { return }
            handedOver.removeAll { $0.ticket <= committed }
        }

        /// The rows of `due` (and those parked before) that may be sent now, oldest parked first: a row whose item's
        /// previous outcome is handed over but not committed waits for that commit (the writer rings the loop), so
        /// a crash can repeat a delivery but never reorder an item's events. Call `settle` first.
        package mutating func ready(_ due: [Int64], committed: UInt64) -> [Int64] {
            var ready: [Int64] = []
            if !parked.isEmpty {
                ready.reserveCapacity(parked.count + due.count)
                parked.removeAll { seq, ticket in
                    guard ticket <= committed else { return false }
                    ready.append(seq)
                    return true
                }
            }
            guard !handedOver.isEmpty else { return ready.isEmpty ? due : ready + due }
            for seq in due {
                if let hash = state.itemHash(of: seq), let waitFor = handedOver.last(where: { $0.items.contains(hash) }) {
                    parked.append((seq, waitFor.ticket))
                } else {
                    ready.append(seq)
                }
            }
            return ready
        }

        /// Rows whose attempts ended but whose removal is not committed yet: still in the outbox, not new.
        package var finishedRows: Set<Int64> {
            var rows = Set(writes.lazy.filter(\.removesRow).map(\.seq))
            for handed in handedOver { rows.formUnion(handed.removed) }
            return rows
        }

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
