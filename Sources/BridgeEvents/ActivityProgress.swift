/// Activity-log rows that a batch resolves: the cursor store records them once the batch's events are accepted.
///
/// `resolvedIDs` holds every activity id the reader has dealt with in this batch — emitted, filtered out, or of a
/// collection nobody subscribed to — so the cursor can move past them. `abandoned` are gaps given up on, as ranges
/// (a gap can be as wide as a jump of the id sequence).
public struct ActivityProgress: Sendable, Equatable {
    /// Activity ids dealt with by this batch.
    public var resolvedIDs: [Int64]
    /// Gaps (ids never seen) that waited longer than the gap timeout, or whose rows are gone: the cursor moves past.
    public var abandoned: [ClosedRange<Int64>]
    /// Per-subscription snapshot completion to record: uid → watermark activity id.
    public var completedSnapshots: [String: Int64]

    /// Creates progress.
    public init(
        resolvedIDs: [Int64] = [],
        abandoned: [ClosedRange<Int64>] = [],
        completedSnapshots: [String: Int64] = [:]
    ) {
        self.resolvedIDs = resolvedIDs
        self.abandoned = abandoned
        self.completedSnapshots = completedSnapshots
    }

    /// Whether there is nothing to record.
    public var isEmpty: Bool { resolvedIDs.isEmpty && abandoned.isEmpty && completedSnapshots.isEmpty }
}
