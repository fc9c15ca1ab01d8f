/// Activity-log rows that a batch resolves: the cursor store records them once the batch's events are accepted.
///
/// `resolvedIDs` holds every activity id the reader has dealt with in this batch — emitted, filtered out, or of a
/// collection nobody subscribed to — so the cursor can move past them. `abandonedIDs` are gaps given up on.
public struct ActivityProgress: Sendable, Equatable {
    /// Activity ids dealt with by this batch.
    public var resolvedIDs: [Int64]
    /// Gaps (ids never seen) that waited longer than the gap timeout: treated as rolled back.
    public var abandonedIDs: [Int64]
    /// Per-subscription snapshot completion to record: uid → watermark activity id.
    public var completedSnapshots: [String: Int64]

    /// Creates progress.
    public init(resolvedIDs: [Int64] = [], abandonedIDs: [Int64] = [], completedSnapshots: [String: Int64] = [:]) {
        self.resolvedIDs = resolvedIDs
        self.abandonedIDs = abandonedIDs
        self.completedSnapshots = completedSnapshots
    }

    /// Whether there is nothing to record.
    public var isEmpty: Bool { resolvedIDs.isEmpty && abandonedIDs.isEmpty && completedSnapshots.isEmpty }
}
