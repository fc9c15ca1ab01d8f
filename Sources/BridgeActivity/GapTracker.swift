internal import BridgeEvents
internal import BridgeDirectus

/// Remembers when each gap of an `ActivityCursor` was first seen, to abandon it after `timeout`.
///
/// Gaps are ranges, and so is what the tracker keeps: a gap only shrinks (rows inside it appear) or is joined by a
/// new one above the previous head, so a range splits into pieces that keep their first-seen time. The tracker holds
/// at most one entry per gap piece with a distinct first-seen time, whatever the width of the gaps.
public struct GapTracker: Sendable {
    private struct Entry: Sendable {
        package var range: ClosedRange<Int64>
        package var since: ContinuousClock.Instant
    }

    /// Ascending, disjoint.
    private var entries: [Entry] = []
    /// How long a gap may stay open before it is treated as a rolled-back transaction.
    public let timeout: Duration

    /// Creates a tracker.
    public init(timeout: Duration) { self.timeout = timeout }

    /// Entries kept (for tests: the tracker's size).
    package var entryCount: Int { entries.count }

    /// Updates the tracked gaps to `gaps` (ascending ranges; ids new to the tracker are noted at `now`) and returns
    /// the parts older than the timeout, ascending.
    public mutating func expired(gaps: [ClosedRange<Int64>], now: ContinuousClock.Instant) -> [ClosedRange<Int64>] {
        var current: [Entry] = []
        var index = 0  // the first old entry that may still overlap what is left of the gaps
        for gap in gaps {
            var low = gap.lowerBound
            while true {
                while index < entries.count && entries[index].range.upperBound < low { index += 1 }
                let piece: Entry
                if index < entries.count && entries[index].range.lowerBound <= low {
                    let old = entries[index]
                    piece = Entry(range: low...min(gap.upperBound, old.range.upperBound), since: old.since)
                } else if index < entries.count && entries[index].range.lowerBound <= gap.upperBound {
                    piece = Entry(range: low...entries[index].range.lowerBound - 1, since: now)
                } else {
                    piece = Entry(range: low...gap.upperBound, since: now)
                }
                Self.append(piece, to: &current)
                guard piece.range.upperBound < gap.upperBound else { break }
                low = piece.range.upperBound + 1
            }
        }
        entries = current
        var old: [ClosedRange<Int64>] = []
        for entry in current where now - entry.since >= timeout {
            if let last = old.last, last.upperBound < .max, last.upperBound + 1 == entry.range.lowerBound {
                old[old.count - 1] = last.lowerBound...entry.range.upperBound
            } else {
                old.append(entry.range)
            }
        }
        return old
    }

    /// Appends `entry`, joining it to the last one when they are adjacent and were first seen at the same time.
    private static func append(_ entry: Entry, to entries: inout [Entry]) {
        if let last = entries.last, last.since == entry.since, last.range.upperBound + 1 == entry.range.lowerBound {
            entries[entries.count - 1].range = last.range.lowerBound...entry.range.upperBound
        } else {
            entries.append(entry)
        }
    }
}
