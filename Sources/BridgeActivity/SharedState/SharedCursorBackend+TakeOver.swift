package import BridgeEvents
internal import BridgeNATS
internal import BridgeSystem
internal import Synchronization

extension SharedCursorBackend {
    /// Loads the progress of every configured sink and bumps the revision of each key it will write (the fencing
    /// step), bringing the bucket to the configured sinks as `CursorDatabase` brings its file:
    /// * a configured sink without a cursor starts from the progress of its positional id (`renames`: a name added
    ///   to a sink that had none), else from the sink furthest behind — a sink no longer configured included — with
    ///   that sink's subscription states, or at the newest activity id when none has a cursor;
    /// * the cursor and subscription keys of sinks no longer configured are deleted (their dead letters stay);
    /// * pending `resync` requests (`SharedResyncRequest`) move into the subscription states.
    package func takeOver(sinks: [String], renames: SinkRenames = SinkRenames()) throws {
        // Read before the keys are listed: a `resync` written after this moves the mark past it, and the term takes
        // it (`resyncRequests(stores:)`).
        var taking = State(resyncMark: try SharedResyncRequest.mark(in: store, keys: keys))
        let allKeys = Set(try store.keys())
        for sink in sinks {
            try takeJournal(of: sink, into: &taking)
            taking.loaded[sink] = try progress(of: sink, among: allKeys, rewriting: true, into: &taking)
        }
        let configured = Set(sinks)
        var removed: [String: CursorDatabase.Loaded] = [:]
        for sink in Set(allKeys.compactMap(keys.sink(ofKey:))) where !configured.contains(sink) {
            let progress = try progress(of: sink, among: allKeys, rewriting: false, into: &taking)
            if progress.cursor != nil || !progress.subscriptions.isEmpty { removed[sink] = progress }
        }
        try adopt(sinks, removed: removed, renames: renames, into: &taking)
        for (sink, progress) in removed { try remove(sink, progress, into: &taking) }
        try takeResyncRequests(among: allKeys, sinks: sinks, into: &taking)
        let taken = taking
        state.withLock { $0 = taken }
    }

    /// The dead-letter journal is moved like the cursor (created when missing), so a previous active bridge can no
    /// more write a dead letter than a cursor; a letter it left there unfiled is handed to the sink (`takenOver`).
    private func takeJournal(of sink: String, into taking: inout State) throws {
        let key = keys.deadLetterJournal(sink: sink)
        let journal = try store.entry(key)
        taking.takenOver[key] = journal?.value
        taking.revisions[key] = try write(
            key, value: journal?.value ?? SharedStateKeys.emptyJournal, expecting: journal?.revision ?? 0)
    }

    /// `sink`'s cursor and subscription states (damaged values skipped), each key's revision noted; with `rewriting`
    /// every value is written back, which moves its revision past what a previous active bridge saw.
    private func progress(
        of sink: String, among allKeys: Set<String>, rewriting: Bool, into taking: inout State
    ) throws -> CursorDatabase.Loaded {
        var subscriptions: [String: SubscriptionCursorState] = [:]
        for key in allKeys {
            guard let uid = keys.uid(ofSubscriptionKey: key, sink: sink), let entry = try store.entry(key),
                let value = entry.value, let subscription = Self.subscription(from: value)
            else { continue }
            taking.revisions[key] = rewriting ? try write(key, value: value, expecting: entry.revision) : entry.revision
            subscriptions[uid] = subscription
        }
        var cursor: ActivityCursor?
        let cursorKey = keys.cursor(sink: sink)
        if let entry = try store.entry(cursorKey) {
            if let value = entry.value, let stored = Self.cursor(from: value) { cursor = stored }
            // A delete marker is kept as it is (its revision is what a first write expects); a value is rewritten.
            if rewriting, let value = entry.value {
                taking.revisions[cursorKey] = try write(cursorKey, value: value, expecting: entry.revision)
            } else {
                taking.revisions[cursorKey] = entry.revision
            }
        }
        return CursorDatabase.Loaded(cursor: cursor, subscriptions: subscriptions)
    }

    /// Configured sinks without a cursor adopt the progress of their positional id when a name was added to them,
    /// else of the sink furthest behind, one no longer configured included: its cursor, and its subscription states
    /// where they have none of their own. A sink with a new target or position so repeats events rather than missing
    /// any.
    private func adopt(
        _ sinks: [String], removed: [String: CursorDatabase.Loaded], renames: SinkRenames, into taking: inout State
    ) throws {
        let candidates = taking.loaded.merging(removed) { own, _ in own }.compactMap { sink, progress in
            progress.cursor.map { (sink: sink, cursor: $0, subscriptions: progress.subscriptions) }
        }
        guard let furthestBehind = candidates.min(by: { $0.cursor.committed < $1.cursor.committed }) else { return }
        let starting = sinks.filter { taking.loaded[$0]?.cursor == nil }
        let unconfigured = Set(removed.compactMap { sink, progress in progress.cursor == nil ? nil : sink })
        let moves = renames.sources(for: starting, among: unconfigured)
        for sink in starting {
            let former = moves.first { $0.name == sink }.flatMap { move in candidates.first { $0.sink == move.former } }
            let origin = former ?? furthestBehind
            let cursorKey = keys.cursor(sink: sink)
            taking.revisions[cursorKey] = try write(
                cursorKey, value: Self.value(of: origin.cursor, holder: holder),
                expecting: try revision(of: cursorKey, in: taking))
            var subscriptions = taking.loaded[sink]?.subscriptions ?? [:]
            for (uid, stored) in origin.subscriptions where subscriptions[uid] == nil {
                // Its own progress under a new name keeps a snapshot's resume point; another sink's does not.
                let subscription = former != nil ? stored : stored.adopted
                let key = keys.subscription(sink: sink, uid: uid)
                taking.revisions[key] = try write(
                    key, value: Self.value(of: subscription), expecting: try revision(of: key, in: taking))
                subscriptions[uid] = subscription
            }
            taking.loaded[sink] = CursorDatabase.Loaded(cursor: origin.cursor, subscriptions: subscriptions)
            if former != nil {
                logger.info(
                    "sink progress kept under its new name",
                    metadata: [LogKey.sink: sink, LogKey.formerSink: origin.sink])
            } else {
                logger.info(
                    "sink starts from the progress of sink \(origin.sink), the furthest behind",
                    metadata: [LogKey.sink: sink, LogKey.cursor: origin.cursor.committed])
            }
        }
    }

    /// Deletes the cursor and subscription keys of a sink no longer configured, each a delete expecting the revision
    /// just read (a bridge still writing them is fenced).
    private func remove(_ sink: String, _ progress: CursorDatabase.Loaded, into taking: inout State) throws {
        var doomed = progress.subscriptions.keys.map { keys.subscription(sink: sink, uid: $0) }
        if progress.cursor != nil { doomed.append(keys.cursor(sink: sink)) }
        for key in doomed {
            guard let revision = taking.revisions[key] else { continue }
            taking.revisions[key] = try write(key, value: nil, expecting: revision)
        }
        logger.info("progress of a sink no longer configured removed", metadata: [LogKey.sink: sink])
    }

    /// Moves pending `resync` requests into the subscription states of every sink with a cursor (of every sink when
    /// none has one, as `CursorDatabase.requestResync` does), written before the request is deleted: a crash in
    /// between repeats the request rather than losing it. A request rewritten meanwhile stays for the next takeover.
    private func takeResyncRequests(among allKeys: Set<String>, sinks: [String], into taking: inout State) throws {
        let started = sinks.filter { taking.loaded[$0]?.cursor != nil }
        let targets = started.isEmpty ? sinks : started
        for key in allKeys {
            guard let uid = keys.uid(ofResyncKey: key), let request = try store.entry(key), let value = request.value
            else { continue }
            let named = SharedResyncRequest.sinks(of: value)
            for sink in targets where named?.contains(sink) ?? true {
                var subscription = taking.loaded[sink]?.subscriptions[uid] ?? SubscriptionCursorState(startID: 0)
                subscription.resyncRequested = true
                let subscriptionKey = keys.subscription(sink: sink, uid: uid)
                taking.revisions[subscriptionKey] = try write(
                    subscriptionKey, value: Self.value(of: subscription),
                    expecting: try revision(of: subscriptionKey, in: taking))
                taking.loaded[sink, default: CursorDatabase.Loaded(cursor: nil, subscriptions: [:])]
                    .subscriptions[uid] = subscription
            }
            _ = try store.change(key) { $0?.revision == request.revision ? .delete : nil }
            logger.info(
                "resync requested: the subscription is snapshotted again", metadata: [LogKey.subscriptionUID: uid])
        }
    }

    /// The revision a first write of `key` expects: as this takeover noted it, else as the bucket has it now (a key
    /// `keys()` does not list may still hold a delete marker).
    private func revision(of key: String, in taking: State) throws -> UInt64 {
        if let known = taking.revisions[key] { return known }
        return try store.entry(key)?.revision ?? 0
    }
}
