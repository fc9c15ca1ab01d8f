internal import BridgeDirectus
public import BridgeEvents
public import BridgeSystem
internal import Synchronization

/// What the cursor store keeps per subscription uid.
public struct SubscriptionCursorState: Sendable, Equatable {
    /// Activity rows at or below this id are not emitted for the subscription (it did not exist then: the newest id
    /// at its first start). A `resync` or a snapshot after a loss to retention keeps it: the changes below the new
    /// snapshot's watermark that the sink has not had yet are still streamed, before the snapshot.
    public var startID: Int64
    /// The activity id read before the subscription's snapshot began, when it has one.
    public var snapshotWatermark: Int64?
    /// Whether that snapshot was accepted by every sink.
    public var snapshotDone: Bool
    /// `directus-bridge resync` asked for a new snapshot: the next start takes a fresh watermark and snapshots.
    public var resyncRequested: Bool
    /// Where a snapshot not done resumes: the last key (JSON text) of the last page the sink made durable, every
    /// item up to it in the sink (`SnapshotPosition`); nil when no page is durable yet.
    public var snapshotAfter: String?
    /// The snapshot's lines durable in the sink up to `snapshotAfter`.
    public var snapshotLines: Int64
    /// The collection whose pages `snapshotAfter` is a key of (nil: not known, written before `cursor.db` version 6).
    /// A subscription's `uid` may be moved to another collection between runs: a key of the old one is no place to
    /// resume the new one's snapshot (`resumePoint(of:)`).
    public var snapshotCollection: String?
    /// The collection the subscription read when this state was made (nil: not known, written before `cursor.db`
    /// version 7 or by an older bridge into the shared bucket). A `uid` moved to another collection in bridge.yaml
    /// is a new subscription in all but name: the next start begins it afresh (`ActivityReaderLoop.prepare`).
    public var collection: String?
    /// The subscription's query (`ItemQuery.fingerprint`) when its snapshot was taken (nil: no snapshot, or not
    /// known: taken before `cursor.db` version 7). A start whose query differs says so: the items the new query
    /// matches and the old one did not were in no snapshot (`resync` takes one).
    public var snapshotQuery: String?

    /// Creates a state.
    public init(
        startID: Int64,
        snapshotWatermark: Int64? = nil,
        snapshotDone: Bool = false,
        resyncRequested: Bool = false,
        snapshotAfter: String? = nil,
        snapshotLines: Int64 = 0,
        snapshotCollection: String? = nil,
        collection: String? = nil,
        snapshotQuery: String? = nil
    ) {
        self.startID = startID
        self.snapshotWatermark = snapshotWatermark
        self.snapshotDone = snapshotDone
        self.resyncRequested = resyncRequested
        self.snapshotAfter = snapshotAfter
        self.snapshotLines = snapshotLines
        self.snapshotCollection = snapshotCollection
        self.collection = collection
        self.snapshotQuery = snapshotQuery
    }

    /// A snapshot was started (the watermark is saved) but not finished: it must run again with the same watermark,
    /// after `snapshotAfter`.
    public var snapshotPending: Bool { snapshotWatermark != nil && !snapshotDone }

    /// The state as another sink takes it over (a sink new to the state starts from the one furthest behind): a
    /// snapshot not done starts from its first page there, since none of its pages is in the new sink.
    public var adopted: SubscriptionCursorState {
        var state = self
        state.snapshotAfter = nil
        state.snapshotLines = 0
        state.snapshotCollection = nil
        return state
    }
}

/// One sink's durable activity progress — in `<state_dir>/cursor.db` (`CursorDatabase`) or in the shared bucket
/// (`SharedCursorBackend`), whichever `CursorBackend` it was given: its cursor and its subscription states (docs/ARCHITECTURE.md "Independent sinks": each sink has its own cursor).
///
/// The sink's runner records each batch's progress here once the sink made the batch durable (`ProgressRecorder`);
/// the sink's activity reader reads the cursor and the subscription states at start-up and saves new subscriptions
/// and snapshot watermarks. Every call may fsync: call it off Swift's cooperative pool.
public final class CursorStore: ProgressRecorder, Sendable {
    private struct State {
        package var cursor: ActivityCursor?
        package var subscriptions: [String: SubscriptionCursorState]
        /// Triggered when `record` marks the subscription's snapshot done (`waitUntilSnapshotDone`).
        package var snapshotCompletions: [String: ShutdownSignal] = [:]
        /// The completion still queued of a snapshot a `resync` superseded, by uid: recorded, it finishes nothing.
        package var supersededCompletions: [String: Int64] = [:]
        /// Counts the saves of each uid's state: a snapshot's pages carry the count at its start
        /// (`SnapshotPosition.run`), and those of a snapshot a later save replaced record nothing.
        package var snapshotRuns: [String: UInt64] = [:]
    }

    /// Where the progress is made durable.
    package let backend: any CursorBackend
    /// The sink's id (`SinkType.identity`).
    public let sink: String
    private let state: Mutex<State>

    /// The store of `sink` in `backend`, loaded.
    package init(
        backend: any CursorBackend,
        sink: String,
        cursor: ActivityCursor?,
        subscriptions: [String: SubscriptionCursorState]
    ) {
        self.backend = backend
        self.sink = sink
        state = Mutex(State(cursor: cursor, subscriptions: subscriptions))
    }

    /// Opens (creating it and the directory when missing) `<directory>/cursor.db` for a single sink, `sink` (tools and
    /// tests; `run` opens a `CursorDatabase` for all its sinks).
    public convenience init(directory: String, sink: String = "default") throws {
        let database = try CursorDatabase(directory: directory, sinks: [sink])
        let loaded = try database.load(sink: sink)
        self.init(backend: database, sink: sink, cursor: loaded.cursor, subscriptions: loaded.subscriptions)
    }

    /// The durable cursor, or nil when this sink never started in activity mode with this state directory.
    public var cursor: ActivityCursor? { state.withLock { $0.cursor } }

    /// Every saved subscription state by uid.
    public var subscriptions: [String: SubscriptionCursorState] { state.withLock { $0.subscriptions } }

    /// What the pages of a snapshot of `uid` started now carry as `SnapshotPosition.run`.
    public func snapshotRun(_ uid: String) -> UInt64 { state.withLock { $0.snapshotRuns[uid, default: 0] } }

    /// The store of `sink` in `backend`, loaded from it.
    package convenience init(backend: any CursorBackend, sink: String) throws {
        let loaded = try backend.load(sink: sink)
        self.init(backend: backend, sink: sink, cursor: loaded.cursor, subscriptions: loaded.subscriptions)
    }

    /// Creates the cursor at `head` (first start: no history replay) unless one exists; returns the cursor in force.
    @discardableResult
    public func startIfNew(at head: Int64) throws -> ActivityCursor {
        try state.withLock { state in
            if let cursor = state.cursor { return cursor }
            try backend.writeCursor(sink: sink, committed: head)
            let cursor = ActivityCursor(committed: head)
            state.cursor = cursor
            return cursor
        }
    }

    /// Saves (replaces) the state of subscription `uid`; a resync request stays unless `clearingResync` (the start
    /// that acts on it). `superseding`: the watermark of a snapshot of `uid` whose completion (its last page) waits in
    /// the queue, which this state replaces — unless already recorded, that completion is recorded as nothing, even
    /// when both watermarks are equal (no activity since).
    public func save(
        _ subscription: SubscriptionCursorState,
        for uid: String,
        clearingResync: Bool = false,
        superseding queued: Int64? = nil
    ) throws {
        try state.withLock { state in
            var subscription = subscription
            // `cursor.db` keeps its own flag, which the command sets; the shared state's is written from here.
            if !clearingResync, state.subscriptions[uid]?.resyncRequested == true { subscription.resyncRequested = true }
            try backend.write(subscription, uid: uid, sink: sink, clearingResync: clearingResync)
            state.snapshotRuns[uid, default: 0] &+= 1
            if let queued, let saved = state.subscriptions[uid],
                !saved.snapshotDone || saved.snapshotWatermark != queued
            {
                state.supersededCompletions[uid] = queued
            }
            state.subscriptions[uid] = subscription
        }
    }

    /// Records a `resync` of `uid` in the subscription's state, where the reader takes it (`recordedResyncRequests`):
    /// the shared state's request, moved out of its own key by the running bridge (`SharedCursorBackend`). Under the
    /// lock of the store's other writes, so that no write of the same key races it.
    package func recordResyncRequest(_ uid: String) throws {
        try state.withLock { state in
            var subscription = state.subscriptions[uid] ?? SubscriptionCursorState(startID: 0)
            subscription.resyncRequested = true
            // `clearingResync`: the flag as given.
            try backend.write(subscription, uid: uid, sink: sink, clearingResync: true)
            state.subscriptions[uid] = subscription
        }
    }

    /// The subscriptions whose resync `directus-bridge resync` recorded for this sink and no start took yet, read
    /// from the backend (the command writes there, beside the running bridge).
    public func recordedResyncRequests() throws -> Set<String> {
        Set(try backend.load(sink: sink).subscriptions.filter(\.value.resyncRequested).keys)
    }

    /// Makes a batch's progress durable in one transaction: resolved and abandoned ids, finished snapshots, and how
    /// far running snapshots got (a position of a snapshot no longer the subscription's records nothing).
    public func record(_ progress: ActivityProgress) throws {
        guard !progress.isEmpty else { return }
        try state.withLock { state -> [ShutdownSignal] in
            var cursor = state.cursor ?? ActivityCursor(committed: 0)
            let before = cursor
            cursor.apply(progress)
            var subscriptions = state.subscriptions
            // A snapshot a `resync` superseded while its last page waited in the queue finishes nothing: the state
            // holds the newer watermark, whose snapshot is still to be made durable.
            // Passed over for good only once this record is durable: a failed one is retried with the same batch.
            var passedOver: [String] = []
            let completed = progress.completedSnapshots.filter { uid, watermark in
                if state.supersededCompletions[uid] == watermark {
                    passedOver.append(uid)
                    return false
                }
                return subscriptions[uid]?.snapshotWatermark.map { $0 <= watermark } ?? true
            }
            for (uid, watermark) in completed {
                var saved = subscriptions[uid] ?? SubscriptionCursorState(startID: watermark)
                saved.snapshotWatermark = watermark
                saved.snapshotDone = true
                saved.snapshotAfter = nil
                saved.snapshotLines = 0
                saved.snapshotCollection = nil
                subscriptions[uid] = saved
            }
            var advanced: [String] = []
            for (uid, position) in progress.snapshotPositions where completed[uid] == nil {
                guard var saved = subscriptions[uid], state.snapshotRuns[uid, default: 0] == position.run,
                    saved.snapshotWatermark == position.watermark, !saved.snapshotDone
                else { continue }
                saved.snapshotAfter = position.after
                saved.snapshotLines = position.lines
                saved.snapshotCollection = position.collection
                subscriptions[uid] = saved
                advanced.append(uid)
            }
            let changed = cursor != before || state.cursor == nil
            let finished = (completed.keys.sorted() + advanced.sorted()).compactMap { uid in
                subscriptions[uid].map { (uid, $0) }
            }
            try backend.record(
                sink: sink,
                cursor: changed ? cursor : nil,
                previous: before,
                subscriptions: finished
            )
            for uid in passedOver { state.supersededCompletions[uid] = nil }
            state.cursor = cursor
            state.subscriptions = subscriptions
            return completed.keys.compactMap { state.snapshotCompletions.removeValue(forKey: $0) }
        }.forEach { $0.trigger() }
    }

    /// Waits until the snapshot of `uid` from `watermark` is recorded done — its last page durable in the sink, so
    /// every item before it too — and returns true; false when `stop` (or the task's cancellation) came first. "Snapshot done" is said only
    /// then (contract, "The delivery guarantee, per mode").
    public func waitUntilSnapshotDone(_ uid: String, watermark: Int64, stop: ShutdownSignal) async -> Bool {
        while true {
            let completion = state.withLock { state -> ShutdownSignal? in
                if let saved = state.subscriptions[uid], saved.snapshotDone, saved.snapshotWatermark == watermark {
                    return nil
                }
                if let waiting = state.snapshotCompletions[uid] { return waiting }
                let created = ShutdownSignal()
                state.snapshotCompletions[uid] = created
                return created
            }
            guard let completion else { return true }
            // Cancelled, both waits below return at once: without this the loop would spin.
            if stop.isTriggered || Task.isCancelled { return false }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await completion.wait() }
                group.addTask { await stop.wait() }
                await group.next()
                group.cancelAll()
            }
        }
    }
}
