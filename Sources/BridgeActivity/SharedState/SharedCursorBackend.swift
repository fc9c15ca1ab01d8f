internal import BridgeEvents
package import BridgeNATS
internal import BridgeJSON
package import BridgeSystem
internal import Synchronization

/// `state.backend: jetstream`: every sink's cursor and subscription states in a key-value bucket shared by the
/// bridges of one name (docs/ARCHITECTURE.md "Shared state, lease and fencing"), and the fenced writes of the term
/// for what sinks keep there (`SharedTermWriter`: a webhook sink's dead-letter journal).
///
/// Every write is a compare-and-set on the revision this bridge last wrote or read. `takeOver` — run by a bridge
/// that just acquired the lease, before it reads Directus — rewrites each key it will use, so that the revision
/// moves past anything a previous active bridge saw: that bridge's next write conflicts. A conflict is never
/// retried: it throws `FencedError` and calls `fenced`, and the bridge steps down. Calls block (requests to the
/// servers): call them off Swift's cooperative pool.
package final class SharedCursorBackend: CursorBackend, SharedTermWriter {
    let store: KeyValueStore
    let keys: SharedStateKeys
    let holder: String
    private let fenced: @Sendable (String) -> Void
    let logger: Logger
    struct State {
        /// The revision of each key as this bridge last wrote or read it.
        var revisions: [String: UInt64] = [:]
        /// What `takeOver` loaded, per sink.
        var loaded: [String: CursorDatabase.Loaded] = [:]
        /// The values of the other keys `takeOver` moved (the dead-letter journals), by key.
        var takenOver: [String: [UInt8]] = [:]
        /// The revision of `<name>.resync` when the requests were last taken (`resyncRequests(stores:)`).
        var resyncMark: UInt64 = 0
    }

    let state = Mutex(State())

    /// A backend over `store` for bridges named by `keys`; `holder` identifies this bridge in the values it
    /// writes; `fenced` is told (with the reason) when a write finds another writer got there first.
    package init(
        store: KeyValueStore, keys: SharedStateKeys, holder: String, logger: Logger,
        fenced: @escaping @Sendable (String) -> Void
    ) {
        self.store = store
        self.keys = keys
        self.holder = holder
        self.logger = logger
        self.fenced = fenced
    }

    /// The shared state could not be used (`reason`): this bridge gives up being active, as if fenced.
    package func giveUp(_ reason: String) { fenced(reason) }

    // MARK: - CursorBackend

    /// What `takeOver` loaded, with every subscription state written since (a `resync` request taken during the
    /// term is read back from here: `CursorStore.recordedResyncRequests`).
    package func load(sink: String) throws -> CursorDatabase.Loaded {
        let loaded = state.withLock { $0.loaded[sink] }
        return loaded ?? CursorDatabase.Loaded(cursor: nil, subscriptions: [:])
    }

    package func writeCursor(sink: String, committed: Int64) throws {
        try put(keys.cursor(sink: sink), value: Self.value(of: ActivityCursor(committed: committed), holder: holder))
    }

    /// The request flag is written as given: `CursorStore` keeps a request unless `clearingResync`.
    package func write(_ subscription: SubscriptionCursorState, uid: String, sink: String, clearingResync: Bool) throws {
        try put(keys.subscription(sink: sink, uid: uid), value: Self.value(of: subscription))
        written(subscription, uid: uid, sink: sink)
    }

    package func record(
        sink: String, cursor: ActivityCursor?, previous: ActivityCursor,
        subscriptions: [(uid: String, state: SubscriptionCursorState)]
    ) throws {
        // Finished snapshots first: a crash between the two writes repeats events (the cursor did not move) rather
        // than losing a snapshot's completion.
        for (uid, subscription) in subscriptions {
            try put(keys.subscription(sink: sink, uid: uid), value: Self.value(of: subscription))
            written(subscription, uid: uid, sink: sink)
        }
        if let cursor { try put(keys.cursor(sink: sink), value: Self.value(of: cursor, holder: holder)) }
    }

    /// Keeps what `load` answers in step with the bucket.
    private func written(_ subscription: SubscriptionCursorState, uid: String, sink: String) {
        state.withLock { state in
            state.loaded[sink, default: CursorDatabase.Loaded(cursor: nil, subscriptions: [:])].subscriptions[uid] =
                subscription
        }
    }

    // MARK: - SharedTermWriter

    package func takenOver(_ key: String) -> [UInt8]? { state.withLock { $0.takenOver[key] } }

    package func writeFenced(_ key: String, value: [UInt8]) throws { try put(key, value: value) }

    // MARK: - Compare-and-set

    private func put(_ key: String, value: [UInt8]) throws {
        // A key this term has not read (a new subscription's) may hold a delete marker, which no listing shows (a
        // sink removed, then configured again): its first write expects the marker.
        let expected = try state.withLock { $0.revisions[key] } ?? (store.entry(key)?.revision ?? 0)
        let revision = try write(key, value: value, expecting: expected)
        state.withLock { $0.revisions[key] = revision }
    }

    /// Writes `value` under `key` (nil: a delete marker), a compare-and-set on `revision`; a lost one is the fence.
    func write(_ key: String, value: [UInt8]?, expecting revision: UInt64) throws -> UInt64 {
        let result: Result<UInt64, NATSError>
        do throws(NATSError) {
            if let value {
                result = .success(try store.update(key, value: value, expecting: revision))
            } else {
                result = .success(try store.delete(key, expecting: revision))
            }
        } catch {
            result = .failure(error)
        }
        if case .failure(let error) = result, error.kind == .conflict {
            let reason = "another bridge wrote \(key) (compare-and-set on revision \(revision) lost)"
            fenced(reason)
            throw FencedError(reason: reason)
        }
        return try result.get()
    }

    // MARK: - Values

    static func value(of cursor: ActivityCursor, holder: String) -> [UInt8] {
        let ranges = cursor.resolvedAbove.map { JSONValue.array([JSONValue($0.lowerBound), JSONValue($0.upperBound)]) }
        let object: JSONValue = [
            "committed": JSONValue(cursor.committed), "resolved": .array(ranges), "holder": .string(holder),
        ]
        return object.serialized()
    }

    package static func cursor(from bytes: [UInt8]) -> ActivityCursor? {
        guard let object = try? JSONValue.parse(bytes), let committed = object["committed"]?.int64Value, committed >= 0
        else { return nil }
        // Ranges out of order or upside down are damage, not ranges: dropped rather than trapped on.
        let ranges = (object["resolved"]?.arrayValue ?? []).compactMap { pair -> ClosedRange<Int64>? in
            guard let low = pair[0]?.int64Value, let high = pair[1]?.int64Value, low <= high, low > committed else {
                return nil
            }
            return low...high
        }
        let ordered = zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound < $1.lowerBound }
        return ActivityCursor(committed: committed, resolvedAbove: ordered ? ranges : [])
    }

    static func value(of subscription: SubscriptionCursorState) -> [UInt8] {
        let object: JSONValue = [
            "start_id": JSONValue(subscription.startID),
            "snapshot_watermark": subscription.snapshotWatermark.map { JSONValue($0) } ?? .null,
            "snapshot_done": .bool(subscription.snapshotDone),
            "resync_requested": .bool(subscription.resyncRequested),
            // The resume key as the key itself (a number or a string), as Directus answered it.
            "snapshot_after": subscription.snapshotAfter.flatMap { try? JSONValue.parse($0) } ?? .null,
            "snapshot_lines": JSONValue(subscription.snapshotLines),
            // The collection the resume key is a key of (`SubscriptionCursorState.snapshotCollection`).
            "snapshot_collection": subscription.snapshotCollection.map(JSONValue.string) ?? .null,
            // The collection the state is of (`SubscriptionCursorState.collection`).
            "collection": subscription.collection.map(JSONValue.string) ?? .null,
            // The query its snapshot was taken with (`SubscriptionCursorState.snapshotQuery`).
            "snapshot_query": subscription.snapshotQuery.map(JSONValue.string) ?? .null,
        ]
        return object.serialized()
    }

    package static func subscription(from bytes: [UInt8]) -> SubscriptionCursorState? {
        guard let object = try? JSONValue.parse(bytes), let start = object["start_id"]?.int64Value else { return nil }
        // Written by an older bridge: no resume point, or one without its collection; the pending snapshot starts
        // over either way (`resumePoint(of:)`).
        let after = object["snapshot_after"].flatMap { $0 == .null ? nil : $0.serializedString() }
        return SubscriptionCursorState(
            startID: start, snapshotWatermark: object["snapshot_watermark"]?.int64Value,
            snapshotDone: object["snapshot_done"]?.boolValue ?? false,
            resyncRequested: object["resync_requested"]?.boolValue ?? false,
            snapshotAfter: after, snapshotLines: object["snapshot_lines"]?.int64Value ?? 0,
            snapshotCollection: object["snapshot_collection"]?.stringValue,
            collection: object["collection"]?.stringValue, snapshotQuery: object["snapshot_query"]?.stringValue)
    }
}
