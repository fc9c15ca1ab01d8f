public import BridgeJSON
public import BridgeSystem
public import BridgeEvents
public import BridgeDirectus

/// One row of `directus_activity` as the reader uses it (docs/directus-protocol.md §8.8), with its revision's `delta`
/// when that was read.
public struct ActivityRow: Sendable, Equatable {
    /// The activity id (autoincrement, insert order).
    public var id: Int64
    /// `create`, `update`, `delete`, or one of the actions the bridge ignores (`login`, `comment`, …).
    public var action: String
    /// The collection, or nil for rows about no collection.
    public var collection: String?
    /// The item's primary key as text (Directus stores it as a string).
    public var item: String?
    /// When the change happened.
    public var timestamp: Timestamp?
    /// The user who made it (a UUID), when known.
    public var user: String?
    /// The revision's written fields (`directus_revisions.delta`), when a revision exists and was read.
    public var delta: JSONValue?

    /// Creates a row.
    public init(
        id: Int64,
        action: String,
        collection: String?,
        item: String?,
        timestamp: Timestamp? = nil,
        user: String? = nil,
        delta: JSONValue? = nil
    ) {
        self.id = id
        self.action = action
        self.collection = collection
        self.item = item
        self.timestamp = timestamp
        self.user = user
        self.delta = delta
    }

    /// Reads a row of a `GET /activity` answer (`fields=id,action,collection,item,timestamp,user,revisions.delta`);
    /// nil without an integer `id`.
    public init?(_ json: JSONValue) {
        guard let id = json["id"]?.int64Value else { return nil }
        self.id = id
        action = json["action"]?.stringValue ?? ""
        collection = json["collection"]?.stringValue
        item = json["item"]?.keyString
        timestamp = json["timestamp"]?.stringValue.flatMap { Timestamp(rfc3339: $0) }
        // `user` is a many-to-one: the UUID, or an object when a nested field was asked for.
        user = json["user"]?.stringValue ?? json["user"]?["id"]?.stringValue
        if let revisions = json["revisions"]?.arrayValue, let first = revisions.first,
            let delta = first["delta"], !delta.isNull
        {
            self.delta = delta
        } else {
            delta = nil
        }
    }

    /// The change this row records, or nil for actions that change no item.
    public var change: ChangeEvent? {
        switch action {
        case "create": .create
        case "update": .update
        case "delete": .delete
        default: nil
        }
    }
}
