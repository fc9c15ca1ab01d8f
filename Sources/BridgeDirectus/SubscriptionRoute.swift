public import BridgeEvents

/// What the socket reader does with a subscription's events.
public struct SubscriptionRoute: Sendable, Equatable {
    /// How events of this subscription become output.
    public enum Handling: Sendable, Equatable {
        /// Live mode: every socket event becomes event lines at once.
        case emit
        /// Activity mode: a socket event only wakes the activity reader, which reads the log after the cursor.
        case trigger
    }

    /// The configured subscription uid (also the socket uid).
    public var uid: String
    /// The collection.
    public var collection: String
    /// The collection's primary-key field (from `/fields`, never assumed to be `id`).
    public var primaryKey: String
    /// The events to pass on.
    public var events: Set<ChangeEvent>
    /// Emit or trigger.
    public var handling: Handling
    /// The complete `subscribe` message.
    public var subscribeMessage: String

    /// Creates a route.
    public init(
        uid: String, collection: String, primaryKey: String, events: Set<ChangeEvent>, handling: Handling,
        subscribeMessage: String
    ) {
        self.uid = uid
        self.collection = collection
        self.primaryKey = primaryKey
        self.events = events
        self.handling = handling
        self.subscribeMessage = subscribeMessage
    }
}
