@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks
import Testing

@Suite struct ActivityCursorTests {
    @Test func contiguousIdsAdvanceTheCommittedMark() {
        var cursor = ActivityCursor(committed: 10)
        cursor.resolve([11, 12, 13])
        #expect(cursor.committed == 13)
        #expect(cursor.resolvedAbove.isEmpty)
        #expect(cursor.gaps.isEmpty)
    }

    @Test func anOutOfOrderCommitLeavesAGapUntilItArrives() {
        var cursor = ActivityCursor(committed: 10)
        cursor.resolve([11, 13, 14])
        #expect(cursor.committed == 11)
        #expect(cursor.head == 14)
        #expect(cursor.gaps == [12...12])
        #expect(!cursor.isResolved(12))
        #expect(cursor.isResolved(13))
        cursor.resolve([12])
        #expect(cursor.committed == 14)
        #expect(cursor.gaps.isEmpty)
    }

    @Test func idsAtOrBelowTheMarkAreIgnored() {
        var cursor = ActivityCursor(committed: 10, resolvedAbove: [5...5, 12...12])
        #expect(cursor.resolvedAbove == [12...12])
        cursor.resolve([3, 10])
        #expect(cursor.committed == 10)
        #expect(cursor.gaps == [11...11])
    }

    @Test func progressAppliesResolvedAndAbandoned() {
        var cursor = ActivityCursor(committed: 0)
        cursor.apply(ActivityProgress(resolvedIDs: [1, 3], abandoned: [2...2]))
        #expect(cursor.committed == 3)
    }

    @Test func resolvedIdsAreKeptAsMergedRanges() {
        var cursor = ActivityCursor(committed: 0, resolvedAbove: [20...25, 5...7, 6...9, 10...10])
        #expect(cursor.resolvedAbove == [5...10, 20...25], "overlapping and adjacent ranges are joined")
        cursor.resolve([12, 11, 30, 26])
        #expect(cursor.resolvedAbove == [5...12, 20...26, 30...30])
        #expect(cursor.gaps == [1...4, 13...19, 27...29])
        #expect(cursor.isResolved(8) && cursor.isResolved(26) && !cursor.isResolved(27) && !cursor.isResolved(31))
        cursor.resolve(ranges: [1...4, 13...19])
        #expect(cursor.committed == 26)
        #expect(cursor.resolvedAbove == [30...30])
        #expect(cursor.unresolved(below: 35) == [27...29, 31...34])
        #expect(cursor.unresolved(below: 28) == [27...27])
        #expect(cursor.unresolved(below: 26).isEmpty)
    }

    @Test func gapsExpireAfterTheTimeout() {
        var tracker = GapTracker(timeout: .seconds(30))
        let t0 = ContinuousClock.now
        #expect(tracker.expired(gaps: [5...6], now: t0) == [])
        #expect(tracker.expired(gaps: [5...6, 9...9], now: t0 + .seconds(20)) == [])
        #expect(tracker.expired(gaps: [5...5, 9...9], now: t0 + .seconds(30)) == [5...5])
        #expect(tracker.expired(gaps: [9...9], now: t0 + .seconds(49)) == [])
        #expect(tracker.expired(gaps: [9...9], now: t0 + .seconds(50)) == [9...9])
    }

    @Test func aGapThatSplitsKeepsWhenItWasFirstSeen() {
        var tracker = GapTracker(timeout: .seconds(30))
        let t0 = ContinuousClock.now
        #expect(tracker.expired(gaps: [10...100], now: t0) == [])
        // Rows 40 and 60 appear; ids 101…200 are new above the old head.
        #expect(tracker.expired(gaps: [10...39, 41...59, 61...200], now: t0 + .seconds(20)) == [])
        #expect(tracker.entryCount == 4)
        #expect(
            tracker.expired(gaps: [10...39, 41...59, 61...200], now: t0 + .seconds(30)) == [10...39, 41...59, 61...100]
        )
        #expect(tracker.expired(gaps: [101...200], now: t0 + .seconds(50)) == [101...200])
    }
}

/// Defect 3 of issue 10: an activity id that jumps (a reseeded sequence, sparse ids) must cost memory and time
/// independent of the size of the jump.
@Suite struct ActivityCursorJumpTests {
    @Test(.timeLimit(.minutes(1))) func aJumpOfATrillionIdsCostsOneGap() {
        var cursor = ActivityCursor(committed: 100)
        cursor.resolve([101, 1_000_000_000_101])
        #expect(cursor.head == 1_000_000_000_101)
        #expect(cursor.gaps == [102...1_000_000_000_100])
        #expect(ActivityCursor.count(cursor.gaps) == 999_999_999_999)
        cursor.resolve([500_000_000_000])  // a row committed late inside the jump
        #expect(cursor.gaps == [102...499_999_999_999, 500_000_000_001...1_000_000_000_100])
        var tracker = GapTracker(timeout: .seconds(30))
        let t0 = ContinuousClock.now
        #expect(tracker.expired(gaps: cursor.gaps, now: t0).isEmpty)
        #expect(tracker.entryCount == 2)
        let abandoned = tracker.expired(gaps: cursor.gaps, now: t0 + .seconds(30))
        cursor.resolve(ranges: abandoned)
        #expect(cursor.committed == 1_000_000_000_101)
        #expect(cursor.resolvedAbove.isEmpty)
    }

    @Test func idsNearInt64MaxDoNotOverflow() {
        let top = Int64.max
        var cursor = ActivityCursor(committed: top - 5)
        cursor.resolve([top - 2, top])
        let expected: [ClosedRange<Int64>] = [(top - 4)...(top - 3), (top - 1)...(top - 1)]
        #expect(cursor.gaps == expected)
        #expect(cursor.unresolved(below: top) == expected)
        cursor.resolve(ranges: [(top - 4)...(top - 1)])
        #expect(cursor.committed == .max)
        cursor.resolve([.max, 5])
        #expect(cursor.committed == .max && cursor.gaps.isEmpty && cursor.isResolved(.max))
        #expect(ActivityCursor.count([Int64.min...Int64.max]) == .max)
        #expect(ActivityCursor.count([0...(Int64.max), 0...(Int64.max)]) == .max, "saturates")

        var low = ActivityCursor(committed: .min)
        low.resolve([.min + 2])
        #expect(low.gaps == [(.min + 1)...(.min + 1)])
        #expect(low.unresolved(below: .min).isEmpty)
    }

    @Test func sparseIdsCostOneRangePerRowNotPerId() {
        // Every third id, as a multi-primary cluster hands them out (auto_increment_increment = 3).
        var cursor = ActivityCursor(committed: 0)
        cursor.resolve(stride(from: Int64(3), through: 3000, by: 3))
        #expect(cursor.resolvedAbove.count == 1000)
        #expect(cursor.gaps.count == 1000)
        #expect(ActivityCursor.describe(cursor.gaps).hasPrefix("1-2,4-5,7-8,"))
    }
}
