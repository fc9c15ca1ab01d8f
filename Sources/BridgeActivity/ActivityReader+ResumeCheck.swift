internal import BridgeEvents
internal import BridgeJSON
internal import BridgeSystem

extension ActivityReaderLoop {
    /// What the start logs when a snapshot's resume point cannot be used: the snapshot starts from its first page.
    static let unusableResumePoint =
        "the snapshot's resume point in the saved state cannot be used; the snapshot starts from its first page "
        + "(its sink gets the lines it holds again, none is lost)"

    /// The snapshot to run for `pending` as read back from state (`SnapshotResumePoint`): a damaged resume point is
    /// dropped, with a warning saying why.
    func resumable(_ pending: PendingSnapshot, point: SnapshotResumePoint) -> PendingSnapshot {
        var snapshot = pending
        switch point {
        case .none: break
        case .after(let key, let lines):
            snapshot.after = key
            snapshot.lines = lines
        case .damaged(let reason):
            logger.warning(
                Self.unusableResumePoint,
                metadata: [
                    LogKey.subscriptionUID: pending.subscription.uid, LogKey.collection: pending.subscription.collection,
                    "reason": reason,
                ])
        }
        return snapshot
    }

    /// `pending` with its resume key checked against the collection's keys as they are now: a key of the other kind
    /// (`SnapshotResumePoint.sameKind`, judged by the collection's first key) is dropped, with a warning, and the
    /// snapshot starts from its first page. One read of one item, at a resumed start only. Nil when stopped.
    func checkingResumeKey(_ pending: PendingSnapshot) async -> PendingSnapshot? {
        guard let after = pending.after else { return pending }
        let query = pending.subscription.query
        guard
            let first = await retrying(
                "reading the snapshot failed", { try await self.reader.source.itemsPage(query, after: nil, limit: 1) })
        else { return nil }
        // An empty collection has no key to judge by, and a snapshot after any key reads what one from the start does.
        guard let key = first.lastKey(query.primaryKey), !SnapshotResumePoint.sameKind(key, after) else {
            return pending
        }
        logger.warning(
            Self.unusableResumePoint,
            metadata: [
                LogKey.subscriptionUID: pending.subscription.uid, LogKey.collection: pending.subscription.collection,
                "reason": "the resume key is of another kind than the collection's keys (a number and text)",
            ])
        var fresh = pending
        fresh.after = nil
        fresh.lines = 0
        return fresh
    }
}
