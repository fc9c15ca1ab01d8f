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
    /// Per-subscription snapshot page made durable by this batch: where a stopped snapshot resumes.
    public var snapshotPositions: [String: SnapshotPosition]

    /// Creates progress.
    public init(
        resolvedIDs: [Int64] = [],
        abandoned: [ClosedRange<Int64>] = [],
        completedSnapshots: [String: Int64] = [:],
        snapshotPositions: [String: SnapshotPosition] = [:]
    ) {
        self.resolvedIDs = resolvedIDs
        self.abandoned = abandoned
        self.completedSnapshots = completedSnapshots
        self.snapshotPositions = snapshotPositions
    }

    /// Whether there is nothing to record.
    public var isEmpty: Bool {
        resolvedIDs.isEmpty && abandoned.isEmpty && completedSnapshots.isEmpty && snapshotPositions.isEmpty
    }
}

/// How far a snapshot got in a sink: every item up to `after` (the last key of a page, in the snapshot's key order)
/// is durable there, since a sink's runner records a batch only after every batch before it (docs/RELIABILITY.md,
/// "Careless or hostile operators": a snapshot cut by a clean stop resumes where it stopped).
public struct SnapshotPosition: Sendable, Equatable {
    /// The snapshot's watermark.
    public var watermark: Int64
    /// The last key of the page, as JSON text (a number or a string, as Directus answered it).
    public var after: String
    /// Lines of the snapshot durable with this page (for `status`).
    public var lines: Int64
    /// Which start of the snapshot the page belongs to (`CursorStore.snapshotRun`): a page still queued from a
    /// snapshot that a `resync` replaced records nothing, even at the same watermark.
    public var run: UInt64
    /// The collection `after` is a key of: recorded with it, so that a subscription `uid` moved to another collection
    /// between runs does not resume there (`SubscriptionCursorState.snapshotCollection`).
    public var collection: String

    /// Creates a position.
    public init(watermark: Int64, after: String, lines: Int64, run: UInt64, collection: String) {
        self.watermark = watermark
        self.after = after
        self.lines = lines
        self.run = run
        self.collection = collection
    }
}
