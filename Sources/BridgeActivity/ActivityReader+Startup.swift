internal import BridgeDirectus
internal import BridgeEvents
package import BridgeJSON
internal import BridgeSystem

extension ActivityReaderLoop {
    /// A snapshot to run before streaming: the subscription and the activity id read before it began, and where a
    /// snapshot that an earlier run began resumes.
    package struct PendingSnapshot {
        package var subscription: ActivitySubscription
        package var watermark: Int64
        /// The last key of the last page the sink made durable (nil: from the first page).
        package var after: JSONValue? = nil
        /// The snapshot's lines durable in the sink up to `after`.
        package var lines: Int64 = 0
    }

    /// Loads the cursor and the subscription states, saves what is new (the first cursor, new subscriptions,
    /// snapshot watermarks) and returns the snapshots that are due.
    package func prepare() async throws -> [PendingSnapshot] {
        let store = reader.store
        let saved = store.subscriptions
        let stored = store.cursor
        // The newest id now: where a first start, a new subscription and a snapshot's watermark begin. Read before
        // any item is read, so a change made during a snapshot has a higher id and is streamed afterwards.
        let start = try await reader.source.newestActivityID()
        reader.metrics.saw(head: start)
        if let stored, start < stored.head {
            // Nothing above the cursor can appear until the log's ids pass it again.
            logger.warning(
                "the activity log ends below the saved cursor (another Directus database, or a restored backup?); "
                    + "changes are delivered once its ids pass the cursor; delete cursor.db in delivery.state_dir "
                    + "to start again from the newest activity id",
                metadata: [LogKey.cursor: stored.head, "activity.newest": start]
            )
        }
        let cursor: ActivityCursor
        if let stored {
            cursor = stored
        } else {
            cursor = try await BlockingExecutor.shared.perform { try store.startIfNew(at: start) }
            logger.info("activity cursor created at the newest activity id", metadata: [LogKey.cursor: start])
        }
        var targets: [ActivityEventBuilder.Target] = []
        var pending: [PendingSnapshot] = []
        for subscription in reader.subscriptions {
            var state = saved[subscription.uid]
            if let moved = state, let recorded = moved.collection, recorded != subscription.collection {
                // bridge.yaml points the uid at another collection: the saved state is the old collection's (a
                // snapshot done there is none of the new one's items), so the subscription starts as a new one.
                logger.warning(
                    "the subscription now reads another collection than its saved state was made for; it starts as a "
                        + "new subscription at the newest activity id (with its snapshot when it has one)",
                    metadata: [
                        LogKey.subscriptionUID: subscription.uid, LogKey.collection: subscription.collection,
                        "saved_collection": recorded,
                    ])
                // A `resync` asked for meanwhile still stands: it snapshots the new collection from a fresh watermark.
                state = moved.resyncRequested ? SubscriptionCursorState(startID: start, resyncRequested: true) : nil
            }
            if let requested = state, requested.resyncRequested {
                // `directus-bridge resync`: a fresh watermark and a snapshot from it, which runs once the changes up
                // to it that the sink has not had (those since its cursor: while the bridge was stopped, say) are
                // streamed. The start is kept; a request for a subscription this sink never ran has 0 there
                // (`CursorDatabase.requestResync`): its changes since the sink's cursor come too, before the
                // snapshot — more than a new subscription gets, never less.
                let fresh = SubscriptionCursorState(startID: requested.startID, snapshotAt: start, of: subscription)
                let uid = subscription.uid
                try await BlockingExecutor.shared.perform { try store.save(fresh, for: uid, clearingResync: true) }
                logger.info(
                    "resync requested: the subscription is snapshotted again from the newest activity id",
                    metadata: [LogKey.subscriptionUID: uid, "watermark": start]
                )
                state = fresh
            } else if state == nil {
                let fresh = SubscriptionCursorState(
                    startID: start, snapshotAt: subscription.snapshot ? start : nil, of: subscription)
                let uid = subscription.uid
                try await BlockingExecutor.shared.perform { try store.save(fresh, for: uid) }
                logger.info(
                    "new subscription starts at the newest activity id",
                    metadata: [LogKey.subscriptionUID: uid, LogKey.cursor: start]
                )
                state = fresh
            }
            guard var state else { continue }
            if state.collection == nil {
                // Saved before states named their collection (cursor.db version 7): it is taken to be this one, and
                // recorded, so that a later move to another collection is seen.
                state.collection = subscription.collection
                let (uid, recorded) = (subscription.uid, state)
                try await BlockingExecutor.shared.perform { try store.save(recorded, for: uid) }
            }
            if state.snapshotWatermark != nil, let taken = state.snapshotQuery, taken != subscription.query.fingerprint {
                // Said at every start until a new snapshot is taken: the sink's copy may lack items (or fields).
                logger.warning(
                    "the subscription's query is not the one its snapshot was taken with: items it matches now and did "
                        + "not then are in no snapshot; `directus-bridge resync` of the subscription takes a new one",
                    metadata: [LogKey.subscriptionUID: subscription.uid, LogKey.collection: subscription.collection])
            }
            if state.startID > start {
                // Saved as the newest id of the subscription's first run, so never above the log's end: damage, an
                // edit, or another Directus database. Its changes wait until the ids pass it, as the cursor's do.
                logger.warning(
                    "the subscription starts after an activity id above the newest activity id (a damaged or edited "
                        + "cursor.db, another Directus database?); its changes are delivered once the log's ids pass "
                        + "it; `directus-bridge resync` of the subscription snapshots it again from the newest id",
                    metadata: [
                        LogKey.subscriptionUID: subscription.uid, "starts_after": state.startID,
                        "activity.newest": start,
                    ]
                )
            }
            if state.snapshotPending, let watermark = state.snapshotWatermark {
                // A damaged resume point, or one of another collection, starts the snapshot over, with a warning: a
                // repeat, not a loss.
                pending.append(
                    resumable(
                        PendingSnapshot(subscription: subscription, watermark: watermark),
                        point: state.resumePoint(of: subscription.collection)))
            }
            targets.append(.init(subscription: subscription, startID: state.startID))
        }
        self.cursor = cursor
        builder = ActivityEventBuilder(targets: targets)
        logger.info(
            "reading the activity log",
            metadata: [
                LogKey.cursor: cursor.committed, "cursor.head": cursor.head,
                "gaps": cursor.gaps.count,
                "subscriptions.activity": reader.subscriptions.map(\.uid).joined(separator: ","),
            ]
        )
        return pending
    }

    /// Emits every item matching the subscription's query as `snapshot` lines (keyset pagination in primary-key
    /// order), marks the snapshot done with the last batch, and returns once the sink made that batch durable.
    /// Ids derive from the watermark, so a snapshot repeated after a crash gives the same ids. Returns false when
    /// stopped before the end.
    ///
    /// A page after which the log was read (below) carries its last key (`SnapshotPosition`), which the sink's runner
    /// records once the page is durable, after every page before it: a snapshot that a stop cut resumes after the
    /// last page its sink holds (`pending.after`), at the same watermark. A clean stop reads the log once more and
    /// hands the position of the last page handed (`handPositionAtStop`), so it repeats no line (contract, "The
    /// delivery guarantee, per mode"); a crash repeats at most the pages after the last position recorded.
    ///
    /// The pages are read as the sink takes them, so an item that existed at the watermark may be deleted before its
    /// page is read. Without a filter on the items, each such item still gets its line, with `data` null (it is gone):
    /// with the first page after whose read the log shows its delete and whose last key is at or after its own
    /// (`vanishedUpTo`), else in the last batch (`vanishedKeys`) — before its delete either way, which the reader
    /// reads after the snapshot — and always before a position past its key. The log is read after a page at most
    /// once per `snapshotLogInterval` (a request or two per page was most of what resume added to a snapshot's CPU,
    /// BENCHMARKS.md "Snapshot CPU, the log read once a second"), and the pages in between carry no position: a
    /// position is only ever recorded after the read that gave every item up to it its line. With a filter, whether a
    /// gone item matched it cannot be known, and its delete alone says it is gone; every page carries its position.
    ///
    /// While it waits for the sink, a `resync` of the subscription supersedes it (`snapshot(_:)` then runs the new one).
    package func runSnapshot(_ given: PendingSnapshot) async -> SnapshotWait {
        guard let pending = await checkingResumeKey(given) else { return .stopped }
        let subscription = pending.subscription
        let query = subscription.query
        let watermark = pending.watermark
        let pageSize = reader.settings.snapshotPageSize
        if let resumed = pending.after {
            logger.info(
                "snapshot resumed after the last page its sink holds",
                metadata: [
                    LogKey.subscriptionUID: subscription.uid, LogKey.collection: subscription.collection,
                    "watermark": watermark, "after": resumed.serializedString(), "lines_before": pending.lines,
                ]
            )
        } else {
            logger.info(
                "snapshot started",
                metadata: [
                    LogKey.subscriptionUID: subscription.uid, LogKey.collection: subscription.collection,
                    "watermark": watermark,
                ]
            )
        }
        var progress = ProgressLog(
            "snapshot progress",
            interval: reader.settings.progressInterval,
            logger: logger,
            gauges: reader.metrics.snapshotProgress(uid: subscription.uid, sink: reader.sinkID)
        )
        defer { progress.finish() }
        var total: Int?
        var after = pending.after
        var held = Set<Int>()
        var lines = pending.lines
        let run = reader.store.snapshotRun(subscription.uid)
        var deletions = SnapshotDeletions(watermark: watermark)
        // The keys given a `data: null` line before the last page: a later page holding one again (a key deleted,
        // then created anew) gives no second line; its create comes after the snapshot. By bytes (`ItemKey`): two
        // keys Swift holds equal are two items to Directus.
        var gone = Set<ItemKey>()
        // Said once, when the snapshot is done: on a busy table nearly every page has some (a scale run logged 160
        // lines for six snapshots when it was said per page).
        var vanishedLines = 0
        // The next page, read while the log was read after the previous one.
        var prefetched: (after: JSONValue, page: ItemsPage)?
        let logInterval = reader.settings.snapshotLogInterval
        var lastLogRead = ContinuousClock.now
        // The last key of the pages handed since the last one with a position: a clean stop hands its position.
        var unmarked: JSONValue?
        // Stopped mid-snapshot: the pages handed without a position get it, if the log can be read once more.
        func stopped() async -> SnapshotWait {
            if let unmarked {
                await handPositionAtStop(
                    unmarked, of: subscription, watermark: watermark, deletions: &deletions, held: held,
                    heldEarlierUpTo: pending.after, lines: lines, run: run)
            }
            return .stopped
        }
        while true {
            let position = after
            let page: ItemsPage
            if let ready = prefetched, ready.after == position {
                page = ready.page
            } else {
                guard
                    let read = await retrying(
                        "reading the snapshot failed",
                        { try await self.reader.source.itemsPage(query, after: position, limit: pageSize) }
                    )
                else { return await stopped() }
                page = read
            }
            prefetched = nil
            // Keyset pages move forward: a page ending where the previous one ended (a server that ignores the
            // position answers every page from the start) would repeat forever.
            if let position, let last = page.lastKey(query.primaryKey), last == position {
                logger.error(
                    "snapshot pages do not advance (the server ignores the page position); snapshot cut short",
                    metadata: [LogKey.subscriptionUID: subscription.uid, "primary_key": query.primaryKey]
                )
                return .finished
            }
            if let count = page.total { total = count }
            let receivedAt = Timestamp.now()
            var events: [EncodedEvent] = []
            events.reserveCapacity(page.entries.count)
            var data: [UInt8] = []
            for entry in page.entries {
                // An item too large to read even alone gives its line with `data: null` (the source logged it).
                data.removeAll(keepingCapacity: true)
                let key: String?
                switch entry {
                case .item(let item):
                    key = query.key(of: item)
                    query.appendShaped(item, to: &data)
                case .tooLarge(let tooLarge):
                    key = tooLarge.keyString
                }
                // `gone` is empty unless a delete raced the snapshot: no key is hashed for it then.
                guard let key, gone.isEmpty || !gone.contains(ItemKey(key)) else { continue }
                held.insert(ItemKey(key).hashValue)  // by bytes, as the vanished scan looks keys up
                events.append(snapshotLine(subscription, key: key, data: data, watermark: watermark, at: receivedAt))
            }
            let isLast = page.entries.count < pageSize
            let readsLog = !isLast && !query.narrowsItems && ContinuousClock.now - lastLogRead >= logInterval
            if readsLog, let last = page.lastKey(query.primaryKey) {
                // The next page is read meanwhile: the log's read costs the snapshot no time of its own.
                let source = reader.source
                async let next = Self.prefetchPage(source, query, after: last, limit: pageSize)
                let found = await vanishedUpTo(
                    last, deletions: &deletions, collection: subscription.collection, held: held,
                    heldEarlierUpTo: pending.after)
                if let nextPage = await next { prefetched = (last, nextPage) }
                guard let vanished = found else { return await stopped() }
                lastLogRead = ContinuousClock.now
                vanishedLines += vanished.count
                let now = Timestamp.now()
                for key in vanished {
                    held.insert(ItemKey(key).hashValue)
                    gone.insert(ItemKey(key))
                    events.append(snapshotLine(subscription, key: key, data: [], watermark: watermark, at: now))
                }
            }
            if isLast && !query.narrowsItems {
                guard
                    let vanished = await vanishedKeys(
                        collection: subscription.collection,
                        watermark: watermark,
                        held: held,
                        heldEarlierUpTo: pending.after
                    )
                else { return await stopped() }
                vanishedLines += vanished.count
                let now = Timestamp.now()
                for key in vanished {
                    events.append(snapshotLine(subscription, key: key, data: [], watermark: watermark, at: now))
                }
            }
            lines += Int64(events.count)
            let done: ActivityProgress?
            if isLast {
                done = ActivityProgress(completedSnapshots: [subscription.uid: watermark])
            } else if readsLog || query.narrowsItems, let last = page.lastKey(query.primaryKey) {
                let position = SnapshotPosition(
                    watermark: watermark, after: last.serializedString(), lines: lines, run: run,
                    collection: subscription.collection)
                done = ActivityProgress(snapshotPositions: [subscription.uid: position])
            } else {
                done = nil
            }
            if !events.isEmpty || done != nil {
                do {
                    let batch = EventBatch(events: events, progress: done)
                    if let watermark = try await hand(batch, snapshotOf: subscription.uid) {
                        return .superseded(watermark)
                    }
                } catch {
                    return .stopped  // the queue is closed: nothing more can be handed
                }
            }
            unmarked = done == nil ? page.lastKey(query.primaryKey) ?? unmarked : nil
            reader.metrics.snapshotItems.increment(by: UInt64(events.count))
            let soFar = progress.done + events.count
            progress.advance(
                by: events.count,
                metadata: [LogKey.subscriptionUID: subscription.uid],
                total: total,
                // The server's count: Int.min - soFar would overflow.
                remaining: total.map { $0 > soFar ? $0 - soFar : 0 }
            )
            if isLast { break }
            guard let last = page.lastKey(query.primaryKey) else {
                logger.error(
                    "snapshot items carry no primary key; snapshot cut short",
                    metadata: [LogKey.subscriptionUID: subscription.uid, "primary_key": query.primaryKey]
                )
                return .finished
            }
            after = last
        }
        // Every page is handed over, but the sink may still hold the last ones (full, slow or down): done only once
        // the sink's runner recorded the last page durable, which it does after every earlier page.
        let (store, stop, uid) = (reader.store, self.stop, subscription.uid)
        let durable = await waitTakingResyncs(snapshotOf: uid, completionQueued: watermark) {
            await store.waitUntilSnapshotDone(uid, watermark: watermark, stop: stop)
        }
        guard case .finished = durable else { return durable }
        if vanishedLines > 0 {
            logger.info(
                "snapshot items deleted before their page was read: their lines carry no data",
                metadata: [LogKey.subscriptionUID: subscription.uid, LogKey.count: vanishedLines]
            )
        }
        logger.info(
            "snapshot done",
            metadata: [
                LogKey.subscriptionUID: subscription.uid, LogKey.count: progress.done,
                "elapsed": LogValue.seconds(progress.elapsedSeconds),
            ]
        )
        return .finished
    }

    /// The snapshot page after `after` (nil when the read fails: it is read again, with retries).
    private static func prefetchPage(_ source: any ActivitySource, _ query: ItemQuery, after: JSONValue, limit: Int)
        async -> ItemsPage?
    {
        try? await source.itemsPage(query, after: after, limit: limit)
    }

    /// One `snapshot` line of `subscription`'s collection: its id derives from the watermark.
    func snapshotLine(
        _ subscription: ActivitySubscription,
        key: String,
        data: [UInt8],
        watermark: Int64,
        at time: Timestamp
    ) -> EncodedEvent {
        let fields = EventLineFields(
            identifier: .text(
                EventID.snapshot(
                    collection: subscription.collection,
                    key: key,
                    watermark: watermark,
                    subscriptionSuffix: subscription.idSuffix
                )
            ),
            event: .snapshot,
            collection: subscription.collection,
            key: key,
            origin: .snapshot,
            seq: nil,
            time: time,
            receivedAt: time,
            subscription: subscription.uid
        )
        var body: [UInt8] = []  // sized by the writer (see `EventQueue.byteCount(of:)`)
        EventLineWriter.append(fields, data: data, deltaValue: nil, newline: false, to: &body)
        return EncodedEvent(fields: fields, body: body)
    }
}
