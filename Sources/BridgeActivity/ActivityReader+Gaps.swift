internal import BridgeSystem
internal import BridgeEvents
internal import BridgeDirectus

extension ActivityReaderLoop {
    /// Gaps wider than this many ids are reported as a jump of the id sequence rather than as rolled-back rows
    /// (docs/ARCHITECTURE.md "Activity ids as ranges"): far more ids than transactions a database holds open at once.
    package static let jumpWidth: UInt64 = 10_000

    /// Logs and counts gaps given up on after the gap timeout: narrow ones as rolled-back transactions (counted by
    /// id), wide ones as jumps of the sequence (counted by jump).
    package func reportAbandoned(_ ranges: [ClosedRange<Int64>]) {
        let jumps = ranges.filter { ActivityCursor.count([$0]) > Self.jumpWidth }
        let narrow = ranges.filter { ActivityCursor.count([$0]) <= Self.jumpWidth }
        if !narrow.isEmpty {
            let count = ActivityCursor.count(narrow)
            reader.metrics.abandonedGaps.increment(by: count)
            logger.warning(
                "activity ids never appeared; treating them as rolled back",
                metadata: [LogKey.count: count, "ids": ActivityCursor.describe(narrow)]
            )
        }
        if !jumps.isEmpty {
            reader.metrics.idJumps.increment(by: UInt64(jumps.count))
            logger.warning(
                "activity ids jumped (sequence reseeded, or sparse ids); reading on after the jump",
                metadata: [LogKey.count: ActivityCursor.count(jumps), "ids": ActivityCursor.describe(jumps)]
            )
        }
    }
}
