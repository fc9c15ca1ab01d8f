internal import BridgeEvents
internal import BridgeSystem

/// `directus-bridge resync` beside a running bridge (contract, "Commands"; README.md, "Resync"): between reads, the
/// sink's reader snapshots the requested subscriptions again from a fresh watermark, then streams on after it —
/// what a restart would do, without one. A snapshot of the subscription waiting for its sink (full, down) is
/// superseded at once instead: the contract's 10 seconds hold however long the sink takes nothing. Requests reach the
/// reader through `ActivityReader.requestResync` (the `ResyncRequestWatcher` of `cursor.db`); with shared state a
/// request starts a new term instead, whose start-up takes it.
extension ActivityReaderLoop {
    /// How a snapshot's wait for its sink ended.
    package enum SnapshotWait {
        /// What it waited for happened (the page is queued, the snapshot durable).
        case finished
        /// A `resync` of the subscription was taken: its snapshot starts again from this watermark.
        case superseded(Int64)
        /// The reader stops (shutdown, the queue closed).
        case stopped
    }

    /// Runs the snapshot `pending`, again from a fresh watermark whenever a `resync` of its subscription supersedes
    /// it; false when stopped before the end.
    package func snapshot(_ pending: PendingSnapshot) async -> Bool {
        var pending = pending
        while true {
            switch await runSnapshot(pending) {
            case .finished: return true
            case .stopped: return false
            case .superseded(let watermark):
                logger.info(
                    "snapshot superseded by a resync while it waited for the sink; what it queued is still delivered",
                    metadata: [LogKey.subscriptionUID: pending.subscription.uid, "watermark": pending.watermark]
                )
                pending.watermark = watermark
            }
        }
    }

    /// Runs `wait` (a snapshot page's put on the full queue, the wait until the snapshot is durable) until it
    /// returns, or until a `resync` of `uid` is asked and taken: then the snapshot is superseded, and what it queued
    /// stays queued (its lines are never dropped), the new snapshot's lines behind them. The cursor store records
    /// the superseded snapshot's completion no more (`CursorStore.record`).
    ///
    /// `queued`: the snapshot's watermark when its completion (the last page) is queued already.
    package func waitSuperseding(
        _ uid: String,
        completionQueued queued: Int64? = nil,
        _ wait: @escaping @Sendable () async -> Bool
    ) async -> SnapshotWait {
        while true {
            let asked = reader.resyncRequests.signal(for: uid)
            let finished = await withTaskGroup(of: Bool?.self) { group in
                group.addTask { await wait() }
                group.addTask {
                    await asked.wait()
                    return nil
                }
                // The first to end cancels the other; `wait`'s answer counts even when it lost the race.
                var finished = false
                for await outcome in group {
                    group.cancelAll()
                    if let outcome { finished = outcome }
                }
                return finished
            }
            if finished { return .finished }
            guard asked.isTriggered, !stop.isTriggered else { return .stopped }
            guard reader.resyncRequests.take(uid) else { continue }
            guard
                let taken = await retrying(
                    "cannot start a requested resync",
                    { try await self.startResyncs([uid], superseding: queued) }
                )
            else { return .stopped }
            // A request another start already took (the store holds it no more): keep waiting.
            if taken.uids.contains(uid) { return .superseded(taken.watermark) }
        }
    }

    /// Runs the resyncs requested since the last call; false when stopped before they finished (they stay
    /// requested, or pending with their watermark, for the next start).
    package func runRequestedResyncs() async -> Bool {
        // Taken once, outside the retries: a failed attempt must not lose what was asked.
        let asked = reader.resyncRequests.takeAll()
        guard !asked.isEmpty else { return true }
        guard let requested = await retrying("cannot start a requested resync", { try await self.startResyncs(asked) })
        else { return false }
        for subscription in reader.subscriptions where requested.uids.contains(subscription.uid) {
            guard await snapshot(PendingSnapshot(subscription: subscription, watermark: requested.watermark)) else {
                return false
            }
        }
        return true
    }

    /// Takes the requests still recorded in the store (one already acted on is not repeated), saves the fresh
    /// watermark as each subscription's state (clearing its request) and restarts the stream after it.
    /// `superseding`: the watermark of a running snapshot whose completion is queued (`CursorStore.save`).
    func startResyncs(
        _ asked: Set<String>,
        superseding queued: Int64? = nil
    ) async throws -> (uids: Set<String>, watermark: Int64) {
        let store = reader.store
        let recorded = try await BlockingExecutor.shared.perform { try store.recordedResyncRequests() }
        let uids = asked.intersection(recorded)
        guard !uids.isEmpty else { return ([], 0) }
        // Read before any item, as at start-up: a change made during the snapshot has a higher id and is streamed
        // after it.
        let watermark = try await reader.source.newestActivityID()
        reader.metrics.saw(head: watermark)
        for uid in uids.sorted() {
            let fresh = SubscriptionCursorState(startID: watermark, snapshotWatermark: watermark)
            try await BlockingExecutor.shared.perform {
                try store.save(fresh, for: uid, clearingResync: true, superseding: queued)
            }
            logger.info(
                "resync requested: the subscription is snapshotted again from the newest activity id",
                metadata: [LogKey.subscriptionUID: uid, "watermark": watermark]
            )
        }
        builder = builder.restarting(uids, after: watermark)
        return (uids, watermark)
    }
}
