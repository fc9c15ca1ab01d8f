public import BridgeJSON
import Synchronization

/// The Directus reads the activity reader makes; `DirectusActivitySource` does them over REST, tests use a fake.
public protocol ActivitySource: Sendable {
    /// The newest activity id (0 when the log is empty).
    func newestActivityID() async throws(DirectusError) -> Int64
    /// Up to `limit` rows with an id above `id`, in id order.
    func activity(after id: Int64, limit: Int) async throws(DirectusError) -> [ActivityRow]
    /// Up to `limit` rows with an id in one of `ranges` (ascending, disjoint), in id order: gaps from transactions
    /// that committed late. One range costs the same whatever its width.
    func activity(in ranges: [ClosedRange<Int64>], limit: Int) async throws(DirectusError) -> [ActivityRow]
    /// Revision snapshots (`directus_revisions.data`) by activity id, for items that are gone.
    func revisionSnapshots(activityIDs: [Int64]) async throws(DirectusError) -> [Int64: JSONValue]
    /// The items among `keys` that exist and match `query`'s filter, shaped by its fields.
    func items(_ query: ItemQuery, keys: [String]) async throws(DirectusError) -> [JSONValue]
    /// The keys among `keys` that exist, whatever the filter.
    func existingKeys(_ query: ItemQuery, keys: [String]) async throws(DirectusError) -> Set<String>
    /// A snapshot page: up to `limit` matching items with a primary key after `after`, in key order, and the
    /// number of matching items when the server says (first page).
    func itemsPage(_ query: ItemQuery, after: JSONValue?, limit: Int) async throws(DirectusError)
        -> (items: [JSONValue], total: Int?)
}

/// `ActivitySource` over Directus's REST API (§8.7, §8.8).
///
/// Activity pages ask for `revisions.delta` through the `revisions` alias of `directus_activity`, so one request
/// gives the rows and their deltas (Directus answers it with one more indexed query on `directus_revisions`). If
/// the user may not read revisions, the alias makes Directus refuse the read: the source then reads without it
/// and events carry no `delta`.
public final class DirectusActivitySource: ActivitySource {
    private let api: DirectusAPI
    private let readsDeltas: Mutex<Bool>
    private let onDeltasUnavailable: @Sendable (DirectusError) -> Void

    /// Ids per activity request, and the most primary keys per item request.
    static let keysPerRequest = 500
    /// Bytes of percent-encoded keys per item request: keeps URLs well under Node's 16 KiB header limit.
    static let keyBytesPerRequest = 8000

    /// Creates the source; `onDeltasUnavailable` is told once when revisions turn out unreadable.
    public init(api: DirectusAPI, onDeltasUnavailable: @escaping @Sendable (DirectusError) -> Void = { _ in }) {
        self.api = api
        self.readsDeltas = Mutex(true)
        self.onDeltasUnavailable = onDeltasUnavailable
    }

    private static let rowFields = "id,action,collection,item,timestamp,user"

    public func newestActivityID() async throws(DirectusError) -> Int64 {
        try await api.latestActivityID()
    }

    public func activity(after id: Int64, limit: Int) async throws(DirectusError) -> [ActivityRow] {
        try await readActivity([("filter[id][_gt]", String(id)), ("sort", "id"), ("limit", String(limit))])
    }

    public func activity(in ranges: [ClosedRange<Int64>], limit: Int) async throws(DirectusError) -> [ActivityRow] {
        guard !ranges.isEmpty else { return [] }
        return try await readActivity([("filter", Self.filter(ranges)), ("sort", "id"), ("limit", String(limit))])
    }

    /// `{"_and":[{"id":{"_gte":first}},{"id":{"_lte":last}},{"_or":[{"id":{"_between":[low,high]}},…]}]}` for
    /// ascending `ranges`: the outer bounds let the database use the primary key's index for the whole span.
    static func filter(_ ranges: [ClosedRange<Int64>]) -> String {
        let alternatives: [JSONValue] = ranges.map { range in
            ["id": ["_between": [JSONValue(range.lowerBound), JSONValue(range.upperBound)]]]
        }
        let filter: JSONValue = [
            "_and": [
                ["id": ["_gte": JSONValue(ranges.first?.lowerBound ?? 0)]],
                ["id": ["_lte": JSONValue(ranges.last?.upperBound ?? 0)]],
                ["_or": .array(alternatives)],
            ]
        ]
        return filter.serializedString()
    }

    private func readActivity(_ query: [(String, String)]) async throws(DirectusError) -> [ActivityRow] {
        if readsDeltas.withLock({ $0 }) {
            do {
                let answer = try await api.get(
                    "/activity",
                    query: query + [("fields", Self.rowFields + ",revisions.delta")]
                )
                return Self.rows(answer)
            } catch  where error.isForbidden {
                // The activity itself may be forbidden too: the plain read below tells.
                _ = try await api.get("/activity", query: [("limit", "1"), ("fields", "id")])
                readsDeltas.withLock { $0 = false }
                onDeltasUnavailable(error)
            }
        }
        return Self.rows(try await api.get("/activity", query: query + [("fields", Self.rowFields)]))
    }

    private static func rows(_ answer: JSONValue) -> [ActivityRow] {
        (answer["data"]?.arrayValue ?? []).compactMap(ActivityRow.init)
    }

    public func revisionSnapshots(activityIDs: [Int64]) async throws(DirectusError) -> [Int64: JSONValue] {
        guard readsDeltas.withLock({ $0 }) else { return [:] }
        var snapshots: [Int64: JSONValue] = [:]
        for chunk in activityIDs.chunked(Self.keysPerRequest) {
            let answer = try await api.get(
                "/activity",
                query: [
                    ("filter[id][_in]", chunk.map(String.init).joined(separator: ",")), ("fields", "id,revisions.data"),
                    ("limit", String(chunk.count)),
                ]
            )
            for row in answer["data"]?.arrayValue ?? [] {
                guard let id = row["id"]?.int64Value, let data = row["revisions"]?[0]?["data"], !data.isNull else {
                    continue
                }
                snapshots[id] = data
            }
        }
        return snapshots
    }

    public func items(_ query: ItemQuery, keys: [String]) async throws(DirectusError) -> [JSONValue] {
        var items: [JSONValue] = []
        for chunk in Self.batches(of: keys) {
            let answer = try await api.get(itemsPath(query), query: query.parameters(keys: chunk))
            items += answer["data"]?.arrayValue ?? []
        }
        return items
    }

    public func existingKeys(_ query: ItemQuery, keys: [String]) async throws(DirectusError) -> Set<String> {
        var found: Set<String> = []
        for chunk in Self.batches(of: keys) {
            let answer = try await api.get(itemsPath(query), query: query.existenceParameters(keys: chunk))
            for item in answer["data"]?.arrayValue ?? [] {
                if let key = query.key(of: item) { found.insert(key) }
            }
        }
        return found
    }

    public func itemsPage(_ query: ItemQuery, after: JSONValue?, limit: Int) async throws(DirectusError)
        -> (items: [JSONValue], total: Int?)
    {
        let answer = try await api.get(itemsPath(query), query: query.pageParameters(after: after, limit: limit))
        return (answer["data"]?.arrayValue ?? [], answer["meta"]?["filter_count"]?.intValue)
    }

    /// Splits `keys` into requests of at most `keysPerRequest` keys and `keyBytesPerRequest` encoded bytes (a key
    /// costs its percent-encoded length, at most three bytes per byte, plus the quotes and comma around it).
    static func batches(of keys: [String]) -> [[String]] {
        var batches: [[String]] = []
        var current: [String] = []
        var bytes = 0
        for key in keys {
            let cost = key.utf8.count * 3 + 9
            if !current.isEmpty && (current.count >= keysPerRequest || bytes + cost > keyBytesPerRequest) {
                batches.append(current)
                current = []
                bytes = 0
            }
            current.append(key)
            bytes += cost
        }
        if !current.isEmpty { batches.append(current) }
        return batches
    }

    private func itemsPath(_ query: ItemQuery) -> String { "/items/" + URLQuery.escape(query.collection) }
}

extension Array {
    /// Consecutive slices of at most `size` elements.
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
