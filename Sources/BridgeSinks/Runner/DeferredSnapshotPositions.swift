package import BridgeEvents

/// Snapshot positions a sink's runner has not recorded yet. A snapshot page carries its position
/// (`ActivityProgress.snapshotPositions`), and recording each one cost a `makeDurable` and a `synchronous=FULL`
/// transaction of `cursor.db` per page: a third more CPU for a snapshot into NDJSON (BENCHMARKS.md, "Snapshot
/// resume"). A position only says where a stopped snapshot resumes, and a later one of the same snapshot replaces
/// it, so the runner records one while more pages wait in its inbox only once a second (`SinkRunner.deliver`), and
/// always when the inbox is empty, with any other progress, and before the sink is closed: a clean stop still
/// records the last page its sink made durable.
package struct DeferredSnapshotPositions {
    /// The least time between two recorded positions while pages keep coming.
    package static let interval = Duration.seconds(1)

    private var positions: [String: SnapshotPosition] = [:]
    /// When the oldest position held here was deferred.
    private var since: ContinuousClock.Instant?

    package init() {}

    /// Whether nothing is held.
    package var isEmpty: Bool { positions.isEmpty }

    /// Whether `progress`, the progress of a batch whose events the sink accepted, may wait: it holds nothing but
    /// snapshot positions, more batches wait behind it, and the oldest held position is younger than `interval`.
    /// Then it is held (replacing older positions of the same subscriptions) and true is returned.
    package mutating func hold(
        _ progress: ActivityProgress, moreQueued: Bool, now: ContinuousClock.Instant
    ) -> Bool {
        guard moreQueued, progress.resolvedIDs.isEmpty, progress.abandoned.isEmpty,
            progress.completedSnapshots.isEmpty, !progress.snapshotPositions.isEmpty,
            now - (since ?? now) < Self.interval
        else { return false }
        if since == nil { since = now }
        positions.merge(progress.snapshotPositions) { _, newer in newer }
        return true
    }

    /// `progress` with the held positions it does not replace itself, and nothing held any more: record it once the
    /// sink made what it accepted durable.
    package mutating func taking(into progress: ActivityProgress) -> ActivityProgress {
        var progress = progress
        progress.snapshotPositions.merge(positions) { own, _ in own }
        positions.removeAll()
        since = nil
        return progress
    }
}
