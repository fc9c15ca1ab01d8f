public import BridgeSystem

/// Every field of an event line except the raw JSON of `data` and `delta` (README.md "The event line").
///
/// `Event` and `Origin` are nested so they do not clash with BridgeCore's `ChangeEvent` and `EventOrigin`; the raw
/// values are the same strings, so `EventLineFields.Origin(rawValue: origin.rawValue)` converts.
public struct EventLineFields: Sendable, Hashable {
    /// What happened to an item: the `event` field of an event line (and the suffix of its `type`).
    public enum Event: String, Sendable, Hashable, CaseIterable {
        /// An item was created.
        case create
        /// An item was updated.
        case update
        /// An item was deleted (`data` is `null`).
        case delete
        /// An item as read by a snapshot.
        case snapshot

        /// The `type` field: `directus.items.<event>` (literals: a broker sink reads it for every message's header).
        public var typeName: String {
            switch self {
            case .create: "directus.items.create"
            case .update: "directus.items.update"
            case .delete: "directus.items.delete"
            case .snapshot: "directus.items.snapshot"
            }
        }
    }

    /// Where an event line came from: the `origin` field.
    public enum Origin: String, Sendable, Hashable, CaseIterable {
        /// From the socket (or an activity read it triggered) while connected and caught up.
        case live
        /// Recovered from the activity log while catching up.
        case backfill
        /// From a snapshot.
        case snapshot
    }

    /// `id`: unique per change and sink, stable across retries (`evt_<uuidv7>`, `act_<activity id>…`, `snap_…`);
    /// a live id is held as its UUID and written into the line without a `String` (see ``EventIdentifier``).
    public var identifier: EventIdentifier
    /// `event` (and `type` = `directus.items.<event>`).
    public var event: Event
    /// `collection`.
    public var collection: String
    /// `key`: the primary key as text.
    public var key: String
    /// `origin`.
    public var origin: Origin
    /// `seq`: the Directus activity id when known, else written as `null`.
    public var seq: Int64?
    /// `time`: when the change happened (activity timestamp when known, else receipt time).
    public var time: Timestamp
    /// `received_at`: when the bridge received it.
    public var receivedAt: Timestamp
    /// `subscription`: the subscription uid from the configuration.
    public var subscription: String
    /// `user`: the Directus user id, written only when known.
    public var user: String?

    /// `id` as text (one allocation for a live id: read ``identifier`` on hot paths).
    public var id: String {
        get { identifier.description }
        set { identifier = .text(newValue) }
    }

    /// Creates the fields of one line (`identifier`: `.text(id)`, or a live event's `.live(uuid)`).
    public init(
        identifier: EventIdentifier,
        event: Event,
        collection: String,
        key: String,
        origin: Origin,
        seq: Int64?,
        time: Timestamp,
        receivedAt: Timestamp,
        subscription: String,
        user: String? = nil
    ) {
        self.identifier = identifier
        self.event = event
        self.collection = collection
        self.key = key
        self.origin = origin
        self.seq = seq
        self.time = time
        self.receivedAt = receivedAt
        self.subscription = subscription
        self.user = user
    }
}
