public import BridgeConfig

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

    /// Creates a subscription.
    public init(uid: String, collection: String, events: Set<ChangeEvent>, query: ItemQuery, snapshot: Bool) {
        self.uid = uid
        self.collection = collection
        self.events = events
        self.query = query
        self.snapshot = snapshot
    }

    /// The activity subscription of a configured one whose primary key is `primaryKey`.
    public init(_ config: SubscriptionConfig, primaryKey: String) {
        self.init(
            uid: config.uid,
            collection: config.collection,
            events: SubscriptionPlanner.events(of: config),
            query: ItemQuery(collection: config.collection, primaryKey: primaryKey, query: config.query),
            snapshot: config.snapshot
        )
    }
}
