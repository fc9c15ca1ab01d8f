/// One Directus realtime subscription (an entry of `subscriptions`).
public struct SubscriptionConfig: Sendable, Equatable {
    /// The collection to watch (`collection`). Required.
    public var collection: String
    /// The subscription's identity (`uid`): prefixes every socket uid, names the saved cursor and appears in
    /// each event line's `subscription`. Unique within the file. Default: the collection name.
    public var uid: String
    /// The changes to deliver (`events`), a non-empty subset of create, update, delete in file order.
    /// Default: `[create, update, delete]`.
    public var events: [EventKind]
    /// The Directus query sent with the subscribe message (`query`), always a JSON object when present.
    /// Default: nil (no query).
    public var query: QueryValue?
    /// On first start (no saved cursor) emit every current item as a `snapshot` line (`snapshot`).
    /// Default: false.
    public var snapshot: Bool

    /// Creates a subscription; `uid` defaults to `collection`.
    public init(
        collection: String,
        uid: String? = nil,
        events: [EventKind] = EventKind.subscribable,
        query: QueryValue? = nil,
        snapshot: Bool = false
    ) {
        self.collection = collection
        self.uid = uid ?? collection
        self.events = events
        self.query = query
        self.snapshot = snapshot
    }
}
