public import BridgeEvents
internal import BridgeDirectus

/// Which activity-log ids are dealt with, tolerating ids that commit out of order.
///
/// Directus assigns activity ids at insert, not at commit (directus-protocol.md §8.8 caveats), so a reader can see
/// id 8 before id 7. The cursor therefore keeps `committed` (every id at or below it is resolved) plus the resolved
/// ids above it. Ids between `committed` and the highest resolved id that are not resolved are *gaps*: rows still
/// in an open transaction (they appear later and are delivered then), rows of a rolled-back transaction (they never
/// appear; the reader abandons them after a timeout), or ids a sequence never handed out (a reseed, sparse ids).
/// Every committed row is visible to the bridge's user — activity mode needs read access to every row — so a gap is
/// never a row of another collection.
///
/// Resolved ids and gaps are kept as ranges (docs/ARCHITECTURE.md "Activity ids as ranges"): an id that jumps by
/// 10^12 costs one range, in memory, in `cursor.db` and in the reader's gap checks, whatever the size of the jump.
///
/// The same value type serves twice: the activity reader keeps one for what it has handed to the sinks, and the
/// cursor store keeps one for what the sinks have accepted (the durable one, restored after a restart).
public struct ActivityCursor: Sendable, Equatable {
    /// Every id at or below this is resolved.
    public private(set) var committed: Int64
    /// Resolved ids above `committed`: ascending, disjoint, never adjacent to each other nor to `committed`.
    public private(set) var resolvedAbove: [ClosedRange<Int64>]

    /// Creates a cursor at `committed` with the resolved ranges above it (any order; overlaps are merged).
    public init(committed: Int64, resolvedAbove: [ClosedRange<Int64>] = []) {
        self.committed = committed
        self.resolvedAbove = []
        resolve(ranges: resolvedAbove)
    }

    /// The highest id resolved so far (reads continue after it).
    public var head: Int64 { resolvedAbove.last?.upperBound ?? committed }

    /// Ids below `head` that are not resolved, as ascending ranges.
    public var gaps: [ClosedRange<Int64>] { unresolved(below: head) }

    /// Whether a gap lies at or below `id`. The lowest gap, when there is one, starts right above `committed`.
    public func hasGap(atOrBelow id: Int64) -> Bool { !resolvedAbove.isEmpty && committed < id }

    /// Ids above `committed` and below `limit` that are not resolved, as ascending ranges: the gaps below `limit`,
    /// and the ids between `head` and `limit` when `limit` is above it.
    public func unresolved(below limit: Int64) -> [ClosedRange<Int64>] {
        guard limit > committed else { return [] }
        let last = limit - 1
        var result: [ClosedRange<Int64>] = []
        var next = committed  // every id up to `next` is resolved or reported
        for range in resolvedAbove {
            guard next < last else { break }
            // `range` is never adjacent to `next`, so `next + 1 < range.lowerBound` (no overflow either side).
            result.append(next + 1...min(range.lowerBound - 1, last))
            next = range.upperBound
        }
        if next < last { result.append(next + 1...last) }
        return result
    }

    /// Whether `id` is resolved.
    public func isResolved(_ id: Int64) -> Bool {
        guard id > committed else { return true }
        var low = 0
        var high = resolvedAbove.count
        while low < high {
            let middle = (low + high) / 2
            if resolvedAbove[middle].upperBound < id { low = middle + 1 } else { high = middle }
        }
        return low < resolvedAbove.count && resolvedAbove[low].contains(id)
    }

    /// Marks ids resolved and moves `committed` over every contiguous resolved id.
    public mutating func resolve<S: Sequence>(_ ids: S) where S.Element == Int64 {
        resolve(ranges: ids.map { $0...$0 })
    }

    /// Marks ranges of ids resolved and moves `committed` over every contiguous resolved id.
    public mutating func resolve(ranges: [ClosedRange<Int64>]) {
        guard committed < .max else { return }
        let floor = committed + 1
        var incoming = ranges.compactMap { range -> ClosedRange<Int64>? in
            range.upperBound < floor ? nil : max(range.lowerBound, floor)...range.upperBound
        }
        guard !incoming.isEmpty else { return }
        incoming.sort { $0.lowerBound < $1.lowerBound }
        // Merge two ascending lists, joining overlapping and adjacent ranges.
        var merged: [ClosedRange<Int64>] = []
        merged.reserveCapacity(resolvedAbove.count + incoming.count)
        var old = 0
        var new = 0
        while old < resolvedAbove.count || new < incoming.count {
            let takeOld =
                new == incoming.count
                || (old < resolvedAbove.count && resolvedAbove[old].lowerBound <= incoming[new].lowerBound)
            let range = takeOld ? resolvedAbove[old] : incoming[new]
            if takeOld { old += 1 } else { new += 1 }
            if let last = merged.last, Self.touches(last, range) {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        if let first = merged.first, first.lowerBound == floor {
            committed = first.upperBound
            merged.removeFirst()
        }
        resolvedAbove = merged
    }

    /// Applies a batch's progress.
    public mutating func apply(_ progress: ActivityProgress) {
        resolve(progress.resolvedIDs)
        resolve(ranges: progress.abandoned)
    }

    /// Whether `next` (starting at or after `range`) overlaps `range` or follows it directly.
    private static func touches(_ range: ClosedRange<Int64>, _ next: ClosedRange<Int64>) -> Bool {
        range.upperBound == .max || next.lowerBound <= range.upperBound + 1
    }

    /// How many ids `ranges` hold, saturating at `UInt64.max`.
    public static func count(_ ranges: [ClosedRange<Int64>]) -> UInt64 {
        var total: UInt64 = 0
        for range in ranges {
            let width = UInt64(bitPattern: range.upperBound &- range.lowerBound)
            let (withFirst, overflowA) = width.addingReportingOverflow(1)
            let (sum, overflowB) = total.addingReportingOverflow(withFirst)
            if overflowA || overflowB { return .max }
            total = sum
        }
        return total
    }

    /// `2,5-9,…`: the first ten ranges as text, for log lines.
    public static func describe(_ ranges: [ClosedRange<Int64>]) -> String {
        let shown = ranges.prefix(10).map { range in
            range.lowerBound == range.upperBound ? String(range.lowerBound) : "\(range.lowerBound)-\(range.upperBound)"
        }
        return shown.joined(separator: ",") + (ranges.count > 10 ? ",…" : "")
    }
}
