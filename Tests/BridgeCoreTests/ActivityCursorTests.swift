@testable import BridgeCore
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
        #expect(cursor.gaps == [12])
        #expect(!cursor.isResolved(12))
        #expect(cursor.isResolved(13))
        cursor.resolve([12])
        #expect(cursor.committed == 14)
        #expect(cursor.gaps.isEmpty)
    }

    @Test func idsAtOrBelowTheMarkAreIgnored() {
        var cursor = ActivityCursor(committed: 10, resolvedAbove: [5, 12])
        #expect(cursor.resolvedAbove == [12])
        cursor.resolve([3, 10])
        #expect(cursor.committed == 10)
        #expect(cursor.gaps == [11])
    }

    @Test func progressAppliesResolvedAndAbandoned() {
        var cursor = ActivityCursor(committed: 0)
        cursor.apply(ActivityProgress(resolvedIDs: [1, 3], abandonedIDs: [2]))
        #expect(cursor.committed == 3)
    }

    @Test func gapsExpireAfterTheTimeout() {
        var tracker = GapTracker(timeout: .seconds(30))
        let t0 = ContinuousClock.now
        #expect(tracker.expired(gaps: [5, 6], now: t0) == [])
        #expect(tracker.expired(gaps: [5, 6, 9], now: t0 + .seconds(20)) == [])
        #expect(tracker.expired(gaps: [5, 9], now: t0 + .seconds(30)) == [5])
        #expect(tracker.expired(gaps: [9], now: t0 + .seconds(49)) == [])
        #expect(tracker.expired(gaps: [9], now: t0 + .seconds(50)) == [9])
    }
}
