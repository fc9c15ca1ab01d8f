internal import BridgeConfig
package import BridgeJSON
public import BridgeSystem
package import BridgeEvents
package import BridgeDirectus

/// A manually sorted collection the sort watcher follows, with the subscriptions that want its updates.
public struct SortedCollection: Sendable, Equatable {
    /// The collection.
    public var name: String
    /// Its primary-key field.
    public var primaryKey: String
    /// Its sort field (`meta.sort_field`).
    public var sortField: String
    /// The subscriptions on it whose events include `update`.
    public var subscriptions: [ActivitySubscription]
    /// Whether its subscriptions are served from the activity log (items the log records are left to it).
    public var fromActivityLog: Bool

    /// Creates a description.
    public init(
        name: String, primaryKey: String, sortField: String, subscriptions: [ActivitySubscription],
        fromActivityLog: Bool
    ) {
        self.name = name
        self.primaryKey = primaryKey
        self.sortField = sortField
        self.subscriptions = subscriptions
        self.fromActivityLog = fromActivityLog
    }
}

/// Gives every item that a manual sort moved an `update` line (directus-protocol.md §14.3).
///
/// Directus's `POST /utils/sort` rewrites the sort field of the dragged item and of every item between its old and
/// new place with plain queries: no activity row, no revision, and on the socket one `update` of the dragged item.
/// The watcher keeps each sorted collection's sort values (read at start, at most `maxItems`). When an `update`
/// event names an item whose sort value changed, or the socket reconnected, it reads them all again and emits an
/// `update` line — the item read back with the subscription's query, id `evt_<uuidv7>`, no `seq` — for each item
/// whose value changed and that no other line covers: in live mode the keys the socket event itself delivered, in
/// activity mode the items the activity log records since the last read (the activity reader delivers those).
public final class SortWatcher: Sendable {
    package let collections: [SortedCollection]
    package let source: any SortSource
    /// Every sink's inbox (a full one drops the lines for that sink alone, as for live events).
    package let sinks: any EventIntake
    package let wakeup: SortWakeup
    /// Largest collection followed (memory: one key and value per item).
    package let maxItems: Int
    /// Items per order read.
    package let pageSize: Int
    package let retryDelay: Duration
    package let maxRetryDelay: Duration
    package let metrics: PipelineMetrics
    package let logger: Logger

    /// The largest collection followed by default.
    public static let defaultMaxItems = 100_000

    /// Creates a watcher.
    package init(
        collections: [SortedCollection], source: any SortSource, sinks: any EventIntake, wakeup: SortWakeup,
        maxItems: Int = SortWatcher.defaultMaxItems, pageSize: Int = 1000,
        retryDelay: Duration, maxRetryDelay: Duration, metrics: PipelineMetrics, logger: Logger
    ) {
        self.collections = collections
        self.source = source
        self.sinks = sinks
        self.wakeup = wakeup
        self.maxItems = max(1, maxItems)
        self.pageSize = max(1, pageSize)
        self.retryDelay = retryDelay
        self.maxRetryDelay = maxRetryDelay
        self.metrics = metrics
        self.logger = logger
    }

    /// Runs until `stop` is triggered (or the queue is closed).
    public func run(stop: ShutdownSignal) async {
        await SortWatcherLoop(watcher: self, stop: stop).run()
    }
}

/// The watcher's state, owned by the one task that runs it.
package final class SortWatcherLoop {
    /// What was last read of a collection: its sort values, and (activity mode) the newest activity id then.
    package struct Baseline {
        package var order: SortOrder
        package var activityHead: Int64?
    }

    package let watcher: SortWatcher
    package let stop: ShutdownSignal
    package var baselines: [String: Baseline] = [:]
    package var ids = UUIDv7Generator()
    package var backoff: Backoff

    package init(watcher: SortWatcher, stop: ShutdownSignal) {
        self.watcher = watcher
        self.stop = stop
        backoff = Backoff(initialDelay: watcher.retryDelay, maxDelay: watcher.maxRetryDelay)
    }

    package var logger: Logger { watcher.logger }

    package func run() async {
        for collection in watcher.collections {
            let read = { () async throws(DirectusError) -> Baseline? in try await self.baseline(of: collection) }
            guard let baseline = await attempt(collection, read) else {
                if stop.isTriggered { return }
                continue
            }
            if let baseline { baselines[collection.name] = baseline }
        }
        while !stop.isTriggered && !baselines.isEmpty {
            await watcher.wakeup.wait(stop: stop)
            let (updates, reconnected) = watcher.wakeup.take()
            for collection in watcher.collections where baselines[collection.name] != nil {
                let pending = updates[collection.name]
                guard reconnected || pending != nil else { continue }
                let origin: EventOrigin = reconnected ? .backfill : .live
                let checked: Void? = await attempt(collection) { () async throws(DirectusError) in
                    try await self.check(collection, updates: pending ?? .init(), full: reconnected, origin: origin)
                }
                if checked == nil && stop.isTriggered { return }
            }
        }
    }

    /// Runs `body` until it succeeds (its result), the collection cannot be followed (nil: forgotten, logged), or
    /// the bridge stops (nil).
    package func attempt<T>(_ collection: SortedCollection, _ body: () async throws(DirectusError) -> T) async -> T? {
        let logger = self.logger
        var unfollowable = false
        let result = await retrying(until: stop, backoff: &backoff) { () async throws -> T in
            try await body()
        } failed: { error, delay in
            if let error = error as? DirectusError, !error.isRetriable {
                logger.error(
                    "cannot follow manual sorting of this collection: items a sort moves get no update line",
                    metadata: [LogKey.collection: collection.name, LogKey.error: error.description])
                unfollowable = true
                return nil
            }
            logger.warning(
                "reading a sorted collection failed; retrying",
                metadata: [LogKey.collection: collection.name, LogKey.error: "\(error)", LogKey.delay: delay])
            return delay
        }
        if unfollowable { baselines[collection.name] = nil }
        return result
    }

    /// The collection's sort values now (nil and a warning when it is too large to follow).
    package func baseline(of collection: SortedCollection) async throws(DirectusError) -> Baseline? {
        let head = collection.fromActivityLog ? try await watcher.source.newestActivityID() : nil
        guard let order = try await readOrder(collection) else {
            logger.warning(
                "collection too large to follow manual sorting: items a sort moves, other than the dragged one, get "
                    + "no update line",
                metadata: [LogKey.collection: collection.name, "limit": watcher.maxItems])
            return nil
        }
        return Baseline(order: order, activityHead: head)
    }

    /// Every item's sort value, in primary-key order; nil above `maxItems`.
    package func readOrder(_ collection: SortedCollection) async throws(DirectusError) -> SortOrder? {
        var order = SortOrder()
        var after: JSONValue?
        while true {
            let page = try await watcher.source.orderPage(
                collection: collection.name, primaryKey: collection.primaryKey, sortField: collection.sortField,
                after: after, limit: watcher.pageSize)
            for item in page {
                guard let key = item[collection.primaryKey]?.keyString else { continue }
                order.append(key: key, value: item[collection.sortField]?.serializedString() ?? "null")
            }
            if order.count > watcher.maxItems { return nil }
            // An empty page is the last (not a short one: a server, or a gateway before it, may cap every answer
            // below our `limit`); a page that does not move past `after` would repeat forever.
            guard let last = page.last?[collection.primaryKey], last != after else {
                return order
            }
            after = last
        }
    }

    /// Reads the order again when an update may have been a sort, and emits a line for each item it moved.
    package func check(
        _ collection: SortedCollection, updates: SortWakeup.Updates, full: Bool, origin: EventOrigin
    ) async throws(DirectusError) {
        guard let previous = baselines[collection.name] else { return }
        if !full && !updates.unnamed {
            // Cheap first: only a named item whose sort value changed can be a sort's dragged item.
            let named = try await watcher.source.items(sortQuery(collection), keys: updates.keys.map(\.text)).items
            let changed = named.contains { item in
                guard let key = item[collection.primaryKey]?.keyString, let old = previous.order.value(of: key)
                else { return false }
                return old != (item[collection.sortField]?.serializedString() ?? "null")
            }
            guard changed else { return }
        }
        guard let next = try await baseline(of: collection) else {
            baselines[collection.name] = nil
            return
        }
        var moved = previous.order.moved(to: next.order).filter { !updates.delivered.contains(ItemKey($0)) }
        if let since = previous.activityHead, !moved.isEmpty {
            let recorded = try await watcher.source.recordedKeys(collection: collection.name, keys: moved, after: since)
            moved.removeAll { recorded.contains(ItemKey($0)) }
        }
        logger.debug("checked manual sort order", metadata: [LogKey.collection: collection.name, "moved": moved.count])
        if !moved.isEmpty {
            try await emit(collection, keys: moved, origin: origin)
        }
        baselines[collection.name] = next
    }

    /// The primary key and sort field of items, as an item query.
    package func sortQuery(_ collection: SortedCollection) -> ItemQuery {
        let fields = QueryValue.array([.string(collection.primaryKey), .string(collection.sortField)])
        return ItemQuery(collection: collection.name, primaryKey: collection.primaryKey, query: .object([("fields", fields)]))
    }

    /// One `update` line per moved item and subscription, the item read back with the subscription's query.
    package func emit(_ collection: SortedCollection, keys: [String], origin: EventOrigin) async throws(DirectusError) {
        let now = Timestamp.now()
        var events: [EncodedEvent] = []
        var body: [UInt8] = []
        for subscription in collection.subscriptions {
            var read: [String: [UInt8]] = [:]  // `data` as compact JSON; empty writes `null`
            do throws(DirectusError) {
                let answer = try await watcher.source.items(subscription.query, keys: keys)
                for item in answer.items {
                    guard let key = subscription.query.key(of: item) else { continue }
                    var data: [UInt8] = []
                    subscription.query.appendShaped(item, to: &data)
                    read[key] = data
                }
                // Too large to read even alone: the line says what is known (the source logged it).
                for key in answer.tooLarge { read[key] = [] }
            } catch where error.isForbidden || (error.kind == .rejected && error.status == 400) {
                logger.warning(
                    "cannot read moved items for this subscription",
                    metadata: [LogKey.subscriptionUID: subscription.uid, LogKey.error: error.description])
                continue
            }
            for key in keys {
                guard let item = read[key] else { continue }  // filtered out: no line, as on Directus's socket
                let fields = EventLineFields(
                    identifier: .live(ids.next(at: now)), event: .update, collection: collection.name, key: key,
                    origin: origin, seq: nil, time: now, receivedAt: now, subscription: subscription.uid, user: nil)
                body.removeAll(keepingCapacity: true)
                EventLineWriter.append(fields, data: item, deltaValue: nil, newline: false, to: &body)
                events.append(EncodedEvent(fields: fields, body: body))
            }
        }
        guard !events.isEmpty else { return }
        logger.info(
            "manual sort moved items", metadata: [LogKey.collection: collection.name, LogKey.count: keys.count])
        watcher.metrics.received(events)
        watcher.sinks.offer(EventBatch(events: events, mayDrop: true))
    }
}
