/// Which activity-log ids are dealt with, tolerating ids that commit out of order.
///
/// Directus assigns activity ids at insert, not at commit (directus-protocol.md §8.8 caveats), so a reader can see
/// id 8 before id 7. The cursor therefore keeps `committed` (every id at or below it is resolved) plus the set of
/// resolved ids above it. Ids between `committed` and the highest resolved id that are not resolved are *gaps*: rows
/// still in an open transaction (they appear later and are delivered then), or rows of a rolled-back transaction
/// (they never appear; the reader abandons them after a timeout). Every committed row is visible to the bridge's
/// user — activity mode needs read access to every row — so a gap is never a row of another collection.
///
/// The same value type serves twice: the activity reader keeps one for what it has handed to the sinks, and the
/// cursor store keeps one for what the sinks have accepted (the durable one, restored after a restart).
public struct ActivityCursor: Sendable, Equatable {
    /// Every id at or below this is resolved.
    public private(set) var committed: Int64
    /// Resolved ids above `committed`.
    public private(set) var resolvedAbove: Set<Int64>

    /// Creates a cursor at `committed` with the resolved ids above it.
    public init(committed: Int64, resolvedAbove: Set<Int64> = []) {
        self.committed = committed
        self.resolvedAbove = []
        for id in resolvedAbove where id > committed { self.resolvedAbove.insert(id) }
        advance()
    }

    /// The highest id resolved so far (reads continue after it).
    public var head: Int64 { resolvedAbove.max() ?? committed }

    /// Ids below `head` that are not resolved, ascending.
    public var gaps: [Int64] {
        guard let top = resolvedAbove.max(), top > committed + 1 else { return [] }
        var result: [Int64] = []
        var id = committed + 1
        while id < top {
            if !resolvedAbove.contains(id) { result.append(id) }
            id += 1
        }
        return result
    }

    /// Whether `id` is resolved.
    public func isResolved(_ id: Int64) -> Bool { id <= committed || resolvedAbove.contains(id) }

    /// Marks ids resolved and moves `committed` over every contiguous resolved id.
    public mutating func resolve<S: Sequence>(_ ids: S) where S.Element == Int64 {
        for id in ids where id > committed { resolvedAbove.insert(id) }
        advance()
    }

    /// Applies a batch's progress.
    public mutating func apply(_ progress: ActivityProgress) {
        resolve(progress.resolvedIDs)
        resolve(progress.abandonedIDs)
    }

    private mutating func advance() {
        while resolvedAbove.remove(committed + 1) != nil {
            committed += 1
        }
    }
}

/// Remembers when each gap was first seen, to abandon it after `timeout`.
public struct GapTracker: Sendable {
    private var firstSeen: [Int64: ContinuousClock.Instant] = [:]
    /// How long a gap may stay open before it is treated as a rolled-back transaction.
    public let timeout: Duration

    /// Creates a tracker.
    public init(timeout: Duration) { self.timeout = timeout }

    /// Updates the tracked gaps to `gaps` (noting new ones at `now`) and returns those older than the timeout.
    public mutating func expired(gaps: [Int64], now: ContinuousClock.Instant) -> [Int64] {
        var current: [Int64: ContinuousClock.Instant] = [:]
        var old: [Int64] = []
        for id in gaps {
            let seen = firstSeen[id] ?? now
            current[id] = seen
            if now - seen >= timeout { old.append(id) }
        }
        firstSeen = current
        return old
    }
}
