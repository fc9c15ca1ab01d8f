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

    /// Reads a row of a `GET /activity` answer in place: `row` is one element of the answer's `data` in `buffer`,
    /// its members found in one pass (`fields=id,action,collection,item,timestamp,user,revisions.delta`); only the
    /// revision's `delta` becomes a tree (it is projected by field). Nil without an integer `id`.
    public init?(scanning row: JSONRange, in buffer: UnsafeRawBufferPointer) {
        guard let members = row.members(Self.memberNames, in: buffer), let id = members[0]?.int64Value(in: buffer)
        else { return nil }
        self.id = id
        action = members[1]?.stringValue(in: buffer) ?? ""
        collection = members[2]?.stringValue(in: buffer)
        item = members[3]?.keyString(in: buffer)
        timestamp = members[4]?.stringValue(in: buffer).flatMap { Timestamp(rfc3339: $0) }
        // `user` is a many-to-one: the UUID, or an object when a nested field was asked for.
        user = members[5].flatMap { $0.stringValue(in: buffer) ?? $0.member("id", in: buffer)?.stringValue(in: buffer) }
        delta = members[6]?.elements(in: buffer)?.first?.member("delta", in: buffer).flatMap { range in
            range.kind == .null ? nil : try? JSONValue.parse(Self.slice(range, of: buffer))
        }
    }

    /// The members `init?(scanning:in:)` reads, in the order it reads them.
    private static let memberNames = ["id", "action", "collection", "item", "timestamp", "user", "revisions"]

    private static func slice(_ range: JSONRange, of buffer: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: buffer[range.start..<range.end])
    }

    /// The rows of a `GET /activity` answer, read in place (no tree of the page).
    public static func rows(of answer: DirectusAnswer) -> [ActivityRow] {
        answer.body.withUnsafeBytes { buffer in
            guard let data = answer.root.member("data", in: buffer)?.elements(in: buffer) else { return [] }
            return data.compactMap { ActivityRow(scanning: $0, in: buffer) }
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
