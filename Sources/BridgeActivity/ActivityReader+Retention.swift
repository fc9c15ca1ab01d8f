internal import BridgeSystem
internal import BridgeEvents
package import BridgeDirectus

/// Activity log retention (docs/ARCHITECTURE.md "Activity log retention").
///
/// Directus deletes old activity rows when `RETENTION_ENABLED=true`. Rows the cursor needs that were deleted leave
/// ids the reader never sees: gaps, like the ids of transactions not committed yet. So they are handled as gaps —
/// re-checked on every read and delivered if they appear — and only a gap given up on after the gap timeout is
/// classified: the part below the oldest row still present overall can never appear (retention deleted those rows,
/// oldest first), the rest never appeared (rolled back). Comparing with the oldest row of the whole log — the reader
/// reads every collection — keeps ids that are only sparse for the subscribed collections from counting, and a row
/// that commits late is never skipped for a loss.
extension ActivityReaderLoop {
    /// The parts of `abandoned` (ascending ranges) below the oldest row still in the log: ids whose rows are gone.
    package func lostToRetention(_ abandoned: [ClosedRange<Int64>]) async throws(DirectusError) -> [ClosedRange<Int64>] {
        guard let oldest = try await reader.source.oldestActivityID() else { return [] }
        return abandoned.compactMap { range in
            range.lowerBound < oldest ? range.lowerBound...min(range.upperBound, oldest - 1) : nil
        }
    }

    /// The parts of `ranges` outside `lost` (both ascending; every range of `lost` starts a range of `ranges`).
    package static func subtracting(_ lost: [ClosedRange<Int64>], from ranges: [ClosedRange<Int64>]) -> [ClosedRange<Int64>] {
        ranges.compactMap { range in
            guard let cut = lost.first(where: { $0.lowerBound == range.lowerBound }) else { return range }
            return cut.upperBound < range.upperBound ? cut.upperBound + 1...range.upperBound : nil
        }
    }

    /// Prepares the recovery from a loss, before the batch that moves the cursor past it is handed over: reads the
    /// newest id (the snapshots' watermark, read before any of their items), saves a snapshot due at it for every
    /// `snapshot: true` subscription (so a crash before it ran repeats it) and makes their snapshots due
    /// (`pendingSnapshots`). The subscriptions keep their start: what is lost is lost, but the rows still readable
    /// between the reader's position and the watermark are streamed before the snapshots (`isDue`).
    package func prepareSnapshotsAfterLoss() async throws {
        let watermark = try await reader.source.newestActivityID()
        let store = reader.store
        let snapshots = reader.subscriptions.filter(\.snapshot)
        for subscription in snapshots {
            let uid = subscription.uid
            let state = SubscriptionCursorState(
                startID: builder.startID(of: uid) ?? watermark, snapshotAt: watermark, of: subscription)
            try await BlockingExecutor.shared.perform { try store.save(state, for: uid) }
        }
        // Due rather than run here: a `resync` taken while the batch that moves the cursor past the loss waits for
        // the queue replaces them with a newer watermark.
        schedule(Set(snapshots.map(\.uid)), at: watermark)
    }

    /// Says that `lost` is gone (error log with the id range, `directus_bridge_activity_retention_lost_total`); the
    /// snapshots `prepareSnapshotsAfterLoss` made due run once the reader has read up to their watermark. The other
    /// subscriptions go on from the oldest row still there.
    package func reportLoss(_ lost: [ClosedRange<Int64>]) {
        guard let first = lost.first, let last = lost.last else { return }
        let count = ActivityCursor.count(lost)
        reader.metrics.retentionLost.increment(by: count)
        let snapshots = reader.subscriptions.filter(\.snapshot)
        logger.error(
            "activity rows were lost to retention: Directus deleted rows the cursor still needed before they were "
                + "read; their changes cannot be delivered",
            metadata: [
                "activity.lost_from": first.lowerBound, "activity.lost_to": last.upperBound,
                "ids": ActivityCursor.describe(lost), LogKey.count: count,
                "resnapshot": snapshots.map(\.uid).joined(separator: ","),
            ]
        )
    }
}
