internal import BridgeSystem
internal import BridgeEvents

/// `directus-bridge resync` beside a running bridge (contract, "Commands"; README.md, "Resync"): between reads, the
/// sink's reader snapshots the requested subscriptions again from a fresh watermark, then streams on after it —
/// what a restart would do, without one. Requests reach the reader through `ActivityReader.requestResync` (the
/// `ResyncRequestWatcher` of `cursor.db`); with shared state a request starts a new term instead, whose start-up
/// takes it.
extension ActivityReaderLoop {
    /// Runs the resyncs requested since the last call; false when stopped before they finished (they stay
    /// requested, or pending with their watermark, for the next start).
    package func runRequestedResyncs() async -> Bool {
        // Taken once, outside the retries: a failed attempt must not lose what was asked.
        let asked = reader.takeResyncRequests()
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
    private func startResyncs(_ asked: Set<String>) async throws -> (uids: Set<String>, watermark: Int64) {
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
            try await BlockingExecutor.shared.perform { try store.save(fresh, for: uid, clearingResync: true) }
            logger.info(
                "resync requested: the subscription is snapshotted again from the newest activity id",
                metadata: [LogKey.subscriptionUID: uid, "watermark": watermark])
        }
        builder = builder.restarting(uids, after: watermark)
        return (uids, watermark)
    }
}
