internal import BridgeEvents
internal import BridgeSystem

/// `directus-bridge resync` beside a running bridge (contract, "Commands"; README.md, "Resync"): the sink's reader
/// snapshots the requested subscriptions again from a fresh watermark — what a restart would do, without one. The
/// contract gives a running bridge 10 seconds however long the sink takes nothing, so a request is taken between
/// reads and also while the reader waits for its sink (`waitTakingResyncs`): a page of the stream or of a snapshot
/// waiting for room in the full queue, a snapshot waiting to be durable. Taken, the watermark is saved and the
/// snapshot made due (`pendingSnapshots`); it runs once the reader has read up to the watermark (`isDue`), so the
/// changes between where the reader stood and the watermark reach the sink first, as change lines (a delete there is
/// in no snapshot), then the snapshot, then the changes after it: per item, the order Directus made them
/// (docs/ARCHITECTURE.md "State"). A snapshot of the requested subscription in progress is superseded; the
/// snapshot of any other one runs after it. Requests reach the reader through `ActivityReader.requestResync` (the
/// `ResyncRequestWatcher`, of `cursor.db` or of the shared bucket).
extension ActivityReaderLoop {
    /// How a wait for the sink ended.
    package enum SnapshotWait {
        /// What it waited for happened (the page is queued, the snapshot durable).
        case finished
        /// A `resync` of the subscription whose snapshot waited was taken: its snapshot starts again from this
        /// watermark.
        case superseded(Int64)
        /// The reader stops (shutdown, the queue closed).
        case stopped
    }

    /// Runs the snapshot `pending`; a `resync` of its subscription that supersedes it makes a new one due from the
    /// fresh watermark (it runs once the reader has read up to it). False when stopped before the end.
    package func snapshot(_ pending: PendingSnapshot) async -> Bool {
        switch await runSnapshot(pending) {
        case .finished: return true
        case .stopped: return false
        case .superseded(let watermark):
            logger.info(
                "snapshot superseded by a resync while it waited for the sink; what it queued is still delivered",
                metadata: [LogKey.subscriptionUID: pending.subscription.uid, "watermark": pending.watermark]
            )
            schedule([pending.subscription.uid], at: watermark)
            return true
        }
    }

    /// Runs the snapshots that are due (`isDue`), one after the other; false when stopped before the end (each is
    /// saved as pending with its watermark: the next start runs it). Those not due yet stay in `pendingSnapshots`.
    package func runPendingSnapshots() async -> Bool {
        while let index = pendingSnapshots.firstIndex(where: isDue) {
            guard await snapshot(pendingSnapshots.remove(at: index)) else { return false }
        }
        return true
    }

    /// Whether `pending` may run now: the reader has read every row up to its watermark, so every change below it
    /// is queued before the snapshot's first line (per item, Directus's order: those changes, the snapshot line, the
    /// changes after the watermark) — or the subscription starts at or after the watermark (new: no change below it
    /// is streamed). A gap at or below the watermark (a row of a transaction still open when the reader passed it)
    /// holds the snapshot until the row comes or the gap is given up on (`gapTimeout`): its change is below the
    /// watermark too.
    package func isDue(_ pending: PendingSnapshot) -> Bool {
        let watermark = pending.watermark
        let readUpTo = watermark <= max(cursor.head, readThrough) && !cursor.hasGap(atOrBelow: watermark)
        return readUpTo || (builder.startID(of: pending.subscription.uid) ?? .max) >= watermark
    }

    /// Where reads stop while snapshots wait for the reader (`readPage`): the lowest watermark of those not due.
    package var readLimit: Int64? {
        pendingSnapshots.filter { !isDue($0) }.map(\.watermark).min()
    }

    /// Whether the reader has read every row up to `readLimit`: what is left to read is above it, for after the
    /// snapshots that wait.
    package var readUpToLimit: Bool {
        readLimit.map { $0 <= max(cursor.head, readThrough) } ?? false
    }

    /// Says once per watermark that a snapshot read up to its watermark waits for rows below it that are not there
    /// yet (a transaction still open, or rolled back): else `status` shows it pending for up to the gap timeout
    /// without a word.
    package func reportWaitForGaps() {
        guard let limit = readLimit, gapWaitsReported.insert(limit).inserted else { return }
        var ids: Int64 = 0
        for gap in cursor.gaps where gap.lowerBound <= limit {
            let (sum, overflow) = ids.addingReportingOverflow(min(gap.upperBound, limit) - gap.lowerBound + 1)
            ids = overflow ? .max : sum
        }
        logger.info(
            "snapshot waits for activity rows below its watermark that are not committed yet; it runs once they come "
                + "or are given up on",
            metadata: ["watermark": limit, "gaps": ids]
        )
    }

    /// Makes the snapshots of `uids` from `watermark` due after the one in progress, in place of any due before.
    package func schedule(_ uids: Set<String>, at watermark: Int64) {
        pendingSnapshots.removeAll { uids.contains($0.subscription.uid) }
        for subscription in reader.subscriptions where uids.contains(subscription.uid) {
            pendingSnapshots.append(PendingSnapshot(subscription: subscription, watermark: watermark))
        }
    }

    /// Runs `wait` (a put on the full queue, the wait until a snapshot is durable) until it returns, taking every
    /// `resync` asked meanwhile at once: its fresh watermark saved, its snapshot due (`pendingSnapshots`). `wait` is
    /// interrupted for that and run again — a cancelled put queues nothing — unless the request is of `running`, the
    /// subscription whose snapshot waits: then that snapshot is superseded, and what it queued stays queued (its
    /// lines are never dropped), the new snapshot's lines behind them. The cursor store records the superseded
    /// snapshot's completion no more (`CursorStore.record`).
    ///
    /// `queued`: the running snapshot's watermark when its completion (the last page) is queued already.
    package func waitTakingResyncs(
        snapshotOf running: String?,
        completionQueued queued: Int64? = nil,
        _ wait: @escaping @Sendable () async -> Bool
    ) async -> SnapshotWait {
        while true {
            let asked = reader.resyncRequests.signal()
            let finished = await withTaskGroup(of: Bool?.self) { group in
                group.addTask { await wait() }
                group.addTask {
                    await asked.wait()
                    return nil
                }
                // The first to end cancels the other; `wait`'s answer counts even when it lost the race.
                var finished = false
                for await outcome in group {
                    group.cancelAll()
                    if let outcome { finished = outcome }
                }
                return finished
            }
            if finished { return .finished }
            guard asked.isTriggered, !stop.isTriggered else { return .stopped }
            // Taken once, outside the retries: a failed attempt must not lose what was asked.
            let uids = reader.resyncRequests.takeAll()
            guard !uids.isEmpty else { continue }
            let superseding = running.flatMap { uid in queued.map { (uid: uid, watermark: $0) } }
            guard
                let taken = await retrying(
                    "cannot start a requested resync",
                    { try await self.startResyncs(uids, superseding: superseding) }
                )
            else { return .stopped }
            // A request another start already took (the store holds it no more) changes nothing.
            if let running, taken.uids.contains(running) {
                schedule(taken.uids.subtracting([running]), at: taken.watermark)
                return .superseded(taken.watermark)
            }
            schedule(taken.uids, at: taken.watermark)
        }
    }

    /// Takes the resyncs requested since the last call and runs every snapshot due; false when stopped before they
    /// finished (they stay requested, or pending with their watermark, for the next start).
    package func runRequestedResyncs() async -> Bool {
        // Taken once, outside the retries: a failed attempt must not lose what was asked.
        let asked = reader.resyncRequests.takeAll()
        if !asked.isEmpty {
            guard
                let requested = await retrying(
                    "cannot start a requested resync",
                    { try await self.startResyncs(asked) }
                )
            else { return false }
            schedule(requested.uids, at: requested.watermark)
        }
        return await runPendingSnapshots()
    }

    /// Takes the requests still recorded in the store (one already acted on is not repeated) and saves the fresh
    /// watermark in each subscription's state (clearing its request). The subscription keeps its start: the changes
    /// up to the watermark that the sink has not had yet are still streamed, before the snapshot — after a crash
    /// too, from the sink's durable cursor. `superseding`: the running snapshot whose completion is queued, and its
    /// watermark (`CursorStore.save`).
    func startResyncs(
        _ asked: Set<String>,
        superseding running: (uid: String, watermark: Int64)? = nil
    ) async throws -> (uids: Set<String>, watermark: Int64) {
        let store = reader.store
        let recorded = try await BlockingExecutor.shared.perform { try store.recordedResyncRequests() }
        let uids = asked.intersection(recorded)
        guard !uids.isEmpty else { return ([], 0) }
        // Read before any item, as at start-up: a change made during the snapshot has a higher id and is streamed
        // after it.
        let watermark = try await reader.source.newestActivityID()
        reader.metrics.saw(head: watermark)
        for uid in uids.sorted() {
            let fresh = SubscriptionCursorState(
                startID: builder.startID(of: uid) ?? watermark, snapshotAt: watermark,
                of: reader.subscriptions.first { $0.uid == uid })
            let queued = running?.uid == uid ? running?.watermark : nil
            try await BlockingExecutor.shared.perform {
                try store.save(fresh, for: uid, clearingResync: true, superseding: queued)
            }
            logger.info(
                "resync requested: the subscription is snapshotted again from the newest activity id",
                metadata: [LogKey.subscriptionUID: uid, "watermark": watermark]
            )
        }
        return (uids, watermark)
    }
}
