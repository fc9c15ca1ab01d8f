public import BridgeJSON
internal import BridgeEvents
public import BridgeDirectus

/// The Directus reads the sort watcher makes; `DirectusSortSource` does them over REST, tests use a fake.
public protocol SortSource: Sendable {
    /// Up to `limit` items' primary key and sort value, in primary-key order, after the key `after` (nil: from the
    /// start). Each answer item is an object with the two fields.
    func orderPage(collection: String, primaryKey: String, sortField: String, after: JSONValue?, limit: Int)
        async throws(DirectusError) -> [JSONValue]
    /// The items among `keys` as `query` reads them (its fields and filter), and those too large to read.
    func items(_ query: ItemQuery, keys: [String]) async throws(DirectusError) -> ItemRead
    /// The newest activity id (0 when the log is empty).
    func newestActivityID() async throws(DirectusError) -> Int64
    /// The keys among `keys` with a create or update activity row in `collection` above activity id `after`, by
    /// bytes (`ItemKey`): two keys Swift holds equal are two items to Directus.
    func recordedKeys(collection: String, keys: [String], after: Int64) async throws(DirectusError) -> Set<ItemKey>
}

/// `SortSource` over Directus's REST API (docs/directus-protocol.md §8.7, §8.8).
public struct DirectusSortSource: SortSource {
    private let api: DirectusAPI
    private let items: DirectusActivitySource

    /// Creates the source.
    public init(api: DirectusAPI) {
        self.api = api
        items = DirectusActivitySource(api: api)
    }

    public func orderPage(collection: String, primaryKey: String, sortField: String, after: JSONValue?, limit: Int)
        async throws(DirectusError) -> [JSONValue]
    {
        var query: [(String, String)] = [
            ("fields", primaryKey + "," + sortField), ("sort", primaryKey), ("limit", String(limit)),
        ]
        if let after {
            query.append(("filter", JSONValue.object([primaryKey: ["_gt": after]]).serializedString()))
        }
        let answer = try await api.get("/items/" + URLQuery.escape(collection), query: query)
        return answer["data"]?.arrayValue ?? []
    }

    public func items(_ query: ItemQuery, keys: [String]) async throws(DirectusError) -> ItemRead {
        try await items.items(query, keys: keys)
    }

    public func newestActivityID() async throws(DirectusError) -> Int64 {
        try await api.latestActivityID()
    }

    public func recordedKeys(collection: String, keys: [String], after: Int64) async throws(DirectusError)
        -> Set<ItemKey>
    {
        var found: Set<ItemKey> = []
        for chunk in DirectusActivitySource.batches(of: keys) {
            // In pages by id until an empty one: `limit=-1` is held to Directus's QUERY_LIMIT_MAX (and a gateway may
            // cap any answer), and a key left out would be emitted again as a sort.
            var position = after
            while true {
                let filter: JSONValue = [
                    "_and": [
                        ["collection": ["_eq": .string(collection)]],
                        ["item": ["_in": .array(chunk.map { .string($0) })]],
                        ["id": ["_gt": JSONValue(position)]], ["action": ["_in": ["create", "update"]]],
                    ]
                ]
                let limit = api.rowLimit.capped(DirectusActivitySource.keysPerRequest)
                let answer = try await api.get(
                    "/activity",
                    query: [
                        ("filter", filter.serializedString()), ("fields", "id,item"), ("sort", "id"),
                        ("limit", String(limit)),
                    ])
                let rows = answer["data"]?.arrayValue ?? []
                for row in rows {
                    if let key = row["item"]?.keyString { found.insert(ItemKey(key)) }
                }
                guard let last = rows.last?["id"]?.int64Value, last > position else { break }
                position = last
            }
        }
        return found
    }
}
