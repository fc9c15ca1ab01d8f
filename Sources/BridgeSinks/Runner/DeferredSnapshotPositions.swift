package import BridgeEvents

/// Snapshot positions a sink's runner has not recorded yet. A snapshot page carries its position
/// (`ActivityProgress.snapshotPositions`), and recording each one cost a `makeDurable` and a `synchronous=FULL`
/// transaction of `cursor.db` per page: a third more CPU for a snapshot into NDJSON (BENCHMARKS.md, "Snapshot
/// resume"). A position only says where a stopped snapshot resumes, and a later one of the same snapshot replaces
/// it, so the runner records one at most a second after it was held (`SinkRunner.deliver`, and the inbox's wait
/// cut to `longestWait`), with any other progress, and before the sink is closed: a clean stop still records the
/// last page its sink made durable. Held also when the inbox is empty: a sink that keeps up with the snapshot (NDJSON)
/// finds it empty at almost every page, and recording each one there kept a `cursor.db` transaction and its fsync per
/// page, about 3 % of a snapshot's CPU (BENCHMARKS.md, "Snapshot CPU against the pre-resume binary").
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
    /// snapshot positions, and the oldest held position is younger than `interval`. Then it is held (replacing older
    /// positions of the same subscriptions) and true is returned.
    package mutating func hold(_ progress: ActivityProgress, now: ContinuousClock.Instant) -> Bool {
        guard progress.resolvedIDs.isEmpty, progress.abandoned.isEmpty, progress.completedSnapshots.isEmpty,
            !progress.snapshotPositions.isEmpty, now - (since ?? now) < Self.interval
        else { return false }
        if since == nil { since = now }
        positions.merge(progress.snapshotPositions) { _, newer in newer }
        return true
    }

    /// How long the runner may wait for its next batch: `longest` when nothing is held, else until the oldest held
    /// position is `interval` old (then it is recorded, whether or not a batch came).
    package func longestWait(_ longest: Duration, now: ContinuousClock.Instant) -> Duration {
        guard let since else { return longest }
        return min(longest, max(.zero, since + Self.interval - now))
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
