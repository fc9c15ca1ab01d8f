internal import BridgeEvents
internal import BridgeSystem
internal import BridgeJSON

extension ActivityReaderLoop {
    /// A snapshot stopped cleanly (SIGTERM) after pages that carry no position (the log is read at most once per
    /// `snapshotLogInterval`, `runSnapshot`): the log is read once more, and a batch with the `data: null` lines of
    /// the items up to `last` (the last key of the last page handed) deleted before their page was read, and with
    /// `last`'s position, is handed after those pages. The sink's runner records it before the sink is closed (the
    /// queue stays open until the reader returns), so the restart resumes after the last page handed and repeats no
    /// line (docs/RELIABILITY.md, "Careless or hostile operators"). The reads are tried once each: when one fails,
    /// nothing is handed, and the restart repeats the pages after the last position recorded — about
    /// `snapshotLogInterval` of them, never a page whose deleted items lack their lines.
    func handPositionAtStop(
        _ last: JSONValue, of subscription: ActivitySubscription, watermark: Int64, deletions: inout SnapshotDeletions,
        held: Set<Int>, heldEarlierUpTo resumeKey: JSONValue?, lines: Int64, run: UInt64
    ) async {
        guard
            let vanished = await vanishedUpTo(
                last, deletions: &deletions, collection: subscription.collection, held: held,
                heldEarlierUpTo: resumeKey, stopping: true)
        else {
            logger.warning(
                "the activity log could not be read at the stop: the restart repeats the snapshot's pages since its "
                    + "last recorded position",
                metadata: [LogKey.subscriptionUID: subscription.uid])
            return
        }
        let now = Timestamp.now()
        let events = vanished.map { key in
            snapshotLine(subscription, key: key, data: [], watermark: watermark, at: now)
        }
        let position = SnapshotPosition(
            watermark: watermark, after: last.serializedString(), lines: lines + Int64(events.count), run: run,
            collection: subscription.collection)
        let progress = ActivityProgress(snapshotPositions: [subscription.uid: position])
        // A resync taken meanwhile changes nothing here: the reader returns either way.
        _ = try? await hand(EventBatch(events: events, progress: progress), snapshotOf: subscription.uid)
    }
}
