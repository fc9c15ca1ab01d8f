internal import Synchronization

/// Committed outbox rows on their way from a sink's intake to its delivery, in memory: the write-ahead outbox's
/// fast lane. SQLite holds every row before it gets here (`OutboxStore.insert` hands out records only after the
/// commit), so losing this queue loses nothing: delivery reads what it never got from SQLite by `seq` order.
///
/// Bounded by the bytes of body it holds, counting both the records queued here and those delivery still keeps
/// (`holding`: rows not finished yet, their bodies kept for retries, and bodies kept aside for rows not read yet). A
/// batch that would pass the bound is refused whole and the refusal is remembered: delivery then reads rows from
/// SQLite by `seq` order until it has caught up (`take`), so an item's later events never overtake a refused earlier
/// one; the bodies it takes from the queue meanwhile wait aside for their rows.
package final class OutboxHandOff: Sendable {
    private struct Queue {
        var records: [OutboxRecord] = []
        var bytes = 0
        var refused = false
    }

    /// What one `take` found.
    package struct Taken: Sendable {
        /// The records offered since the last take, in `seq` order (every one accepted, none refused in between).
        package var records: [OutboxRecord]
        /// Whether a batch was refused since the last take: rows are missing from `records`.
        package var refused: Bool
    }

    /// The bound, in bytes of body (plus a per-record overhead).
    package let limit: Int
    private let queue = Mutex(Queue())
    private let held = Atomic<Int>(0)

    /// A hand-off holding at most `limit` bytes.
    package init(limit: Int) {
        self.limit = limit
    }

    /// What a record counts against the bound: its body and about what its entry, id and strings take.
    package static func cost(of payload: OutboxPayload) -> Int { payload.body.count + 128 }

    /// Queues `records` (committed rows of one batch, in `seq` order) unless the bound would be passed; returns
    /// whether they were queued. Called by intake after the commit; never blocks on delivery.
    @discardableResult
    package func offer(_ records: [OutboxRecord]) -> Bool {
        guard !records.isEmpty else { return true }
        var bytes = 0
        for record in records { bytes += Self.cost(of: record.payload) }
        let holding = held.load(ordering: .relaxed)
        return queue.withLock { queue in
            guard !queue.refused, queue.bytes + holding + bytes <= limit else {
                queue.refused = true
                return false
            }
            queue.records.append(contentsOf: records)
            queue.bytes += bytes
            return true
        }
    }

    /// Takes everything queued (delivery, once per turn) and clears the refusal.
    package func take() -> Taken {
        queue.withLock { queue in
            defer { queue = Queue() }
            return Taken(records: queue.records, refused: queue.refused)
        }
    }

    /// Delivery says how many bytes of taken records it still keeps.
    package func holding(_ bytes: Int) {
        held.store(bytes, ordering: .relaxed)
    }
}
