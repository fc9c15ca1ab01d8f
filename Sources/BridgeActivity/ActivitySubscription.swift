public import BridgeConfig
public import BridgeEvents
internal import BridgeDirectus

/// A subscription served from the activity log: what the reader needs of its configuration and schema.
public struct ActivitySubscription: Sendable, Equatable {
    /// The configured uid (the event line's `subscription`).
    public var uid: String
    /// The collection.
    public var collection: String
    /// The changes to deliver.
    public var events: Set<ChangeEvent>
    /// How its items are read.
    public var query: ItemQuery
    /// Whether it starts with a snapshot when it has no saved state.
    public var snapshot: Bool
    /// What its event ids end with (``EventID``): nil for the first subscription on its collection, else `uid`
    /// encoded, so that two subscriptions on one collection never give one change the same id.
    public var idSuffix: String?

    /// Creates a subscription.
    public init(
        uid: String, collection: String, events: Set<ChangeEvent>, query: ItemQuery, snapshot: Bool,
        idSuffix: String? = nil
    ) {
        self.uid = uid
        self.collection = collection
        self.events = events
        self.query = query
        self.snapshot = snapshot
        self.idSuffix = idSuffix
    }

    /// The activity subscription of `config`, one of the configured subscriptions `all` (in file order, which
    /// decides the id suffix), on a collection whose primary key is `primaryKey`.
    public init(_ config: SubscriptionConfig, primaryKey: String, among all: [SubscriptionConfig]) {
        let first = all.first { $0.collection == config.collection }
        self.init(
            uid: config.uid,
            collection: config.collection,
            events: SubscriptionPlanner.events(of: config),
            query: ItemQuery(collection: config.collection, primaryKey: primaryKey, query: config.query),
            snapshot: config.snapshot,
            idSuffix: first?.uid == config.uid ? nil : EventID.component(config.uid)
        )
    }
}

extension SubscriptionCursorState {
    /// A fresh state of `subscription`: its changes after `startID`, a snapshot due at `watermark` (nil: none), and
    /// what a later start compares — the collection, and the query that snapshot is taken with.
    init(startID: Int64, snapshotAt watermark: Int64?, of subscription: ActivitySubscription?) {
        self.init(
            startID: startID, snapshotWatermark: watermark, collection: subscription?.collection,
            snapshotQuery: watermark == nil ? nil : subscription?.query.fingerprint)
    }
}
