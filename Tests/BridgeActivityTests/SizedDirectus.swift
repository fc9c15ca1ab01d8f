import BridgeHTTP
import BridgeJSON
import BridgeSystem
import Foundation
import Synchronization

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// Directus's REST reads of the activity reader, served from memory with items and deltas of any size, behind a
/// client that cuts answers at their size limit the way `HTTPClient` does by default (`bodyTruncated`): enough of
/// `GET /activity` and `GET /items/articles` for `DirectusActivitySource`.
final class SizedDirectus: HTTPTransport {
    struct State {
        /// Activity rows by id: (action, item key, delta).
        var rows: [Int64: (action: String, key: Int, delta: JSONValue?)] = [:]
        /// Items of `articles` by key.
        var items: [Int: JSONValue] = [:]
        /// Answers cut at their limit, by path.
        var truncated: [String: Int] = [:]
        /// Requests, by path.
        var requests: [String: Int] = [:]
        /// The longest request URL, in bytes (Node refuses a request head over 16 KiB).
        var longestURL = 0
    }

    let state = Mutex(State())
    /// The limit of a request that names none (the client's `maxResponseBytes`).
    let defaultLimit: Int

    /// At most this many rows an answer, whatever its `limit` (a gateway capping page sizes), when set.
    let cap: Int?

    /// Directus's `QUERY_LIMIT_MAX`, when set: a `limit` above it is refused with 400 `INVALID_QUERY`.
    let queryLimitMax: Int?

    /// What a refusal of a `limit` over `queryLimitMax` says, when set (a server that names another number than it
    /// holds to, or none); Directus's own words otherwise.
    let refusalMessage: String?

    init(defaultLimit: Int, cap: Int? = nil, queryLimitMax: Int? = nil, refusalMessage: String? = nil) {
        self.defaultLimit = defaultLimit
        self.cap = cap
        self.queryLimitMax = queryLimitMax
        self.refusalMessage = refusalMessage
    }

    /// An article whose `body` is `size` bytes long, created (activity `id`) with that body as its delta.
    func create(_ id: Int64, key: Int, size: Int) {
        let body = JSONValue.string(Self.text(size))
        let item: JSONValue = ["id": JSONValue(Int64(key)), "title": .string("t\(key)"), "body": body]
        state.withLock { state in
            state.items[key] = item
            state.rows[id] = ("create", key, ["body": body])
        }
    }

    static func text(_ size: Int) -> String { String(repeating: "x", count: size) }

    /// A client and an API over this transport.
    var api: DirectusAPI {
        let client = DirectusClient(baseURL: "http://directus", transport: self, timeout: .seconds(5))
        let auth = AuthSession(credentials: .staticToken("t"), client: client, logger: .silent)
        return DirectusAPI(client: client, auth: auth)
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        state.withLock { $0.longestURL = max($0.longestURL, request.url.utf8.count) }
        let url = URLComponents(string: request.url)
        let path = url?.path ?? ""
        var query: [String: String] = [:]
        for item in url?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        if let queryLimitMax, let asked = query["limit"].flatMap({ Int($0) }), asked > queryLimitMax {
            let message = refusalMessage ?? "Invalid query. \"limit\" must be less than or equal to \(queryLimitMax)."
            let refusal: JSONValue = [
                "errors": [["message": .string(message), "extensions": ["code": "INVALID_QUERY"]]]
            ]
            state.withLock { $0.requests["refused", default: 0] += 1 }
            return HTTPResponse(status: 400, body: refusal.serialized())
        }
        if let cap, let asked = query["limit"].flatMap({ Int($0) }), asked > cap { query["limit"] = String(cap) }
        let answer = state.withLock { state -> JSONValue in
            state.requests[path, default: 0] += 1
            return path == "/activity" ? Self.activity(query, state) : Self.items(query, state)
        }
        let body = answer.serialized()
        let limit = request.maxResponseBytes ?? defaultLimit
        guard body.count > limit else { return HTTPResponse(status: 200, body: body) }
        state.withLock { $0.truncated[path, default: 0] += 1 }
        return HTTPResponse(status: 200, body: Array(body.prefix(limit)), bodyTruncated: true)
    }

    private static func activity(_ query: [String: String], _ state: State) -> JSONValue {
        let fields = query["fields"] ?? ""
        var ids = state.rows.keys.sorted()
        if query["sort"] == "-id" { return ["data": .array(ids.suffix(1).reversed().map { ["id": JSONValue($0)] })] }
        if let after = query["filter[id][_gt]"].flatMap({ Int64($0) }) { ids = ids.filter { $0 > after } }
        if let filter = query["filter"].flatMap({ try? JSONValue.parse($0) }) {
            // The gap check's form: {"_and":[…, {"_or":[{"id":{"_between":[low,high]}}, …]}]}.
            let alternatives = filter["_and"]?.arrayValue?.compactMap { $0["_or"]?.arrayValue }.first ?? []
            let ranges = alternatives.compactMap { alternative -> ClosedRange<Int64>? in
                guard let low = alternative["id"]?["_between"]?[0]?.int64Value,
                    let high = alternative["id"]?["_between"]?[1]?.int64Value, low <= high
                else { return nil }
                return low...high
            }
            ids = ids.filter { id in ranges.contains { $0.contains(id) } }
        }
        if let list = query["filter[id][_in]"] {
            let wanted = Set(list.split(separator: ",").compactMap { Int64($0) })
            ids = ids.filter { wanted.contains($0) }
        }
        let limit = query["limit"].flatMap { Int($0) } ?? 100
        let rows: [JSONValue] = ids.prefix(limit).compactMap { id in
            guard let row = state.rows[id] else { return nil }
            var json: JSONObject = ["id": JSONValue(id)]
            if fields.contains("action") {
                json["action"] = .string(row.action)
                json["collection"] = "articles"
                json["item"] = .string(String(row.key))
            }
            if fields.contains("revisions.delta") { json["revisions"] = [["delta": row.delta ?? .null]] }
            if fields.contains("revisions.data") { json["revisions"] = [["data": state.items[row.key] ?? .null]] }
            return .object(json)
        }
        return ["data": .array(rows)]
    }

    private static func items(_ query: [String: String], _ state: State) -> JSONValue {
        let filter = query["filter"].flatMap { try? JSONValue.parse($0) }
        var keys = state.items.keys.sorted()
        if let wanted = filter?["id"]?["_in"]?.arrayValue {
            let set = Set(wanted.compactMap { $0.keyString.flatMap { Int($0) } })
            keys = keys.filter { set.contains($0) }
        }
        if let after = filter?["id"]?["_gt"]?.int64Value { keys = keys.filter { Int64($0) > after } }
        let total = keys.count
        let limit = query["limit"].flatMap { Int($0) } ?? 100
        let onlyKey = query["fields"] == "id"
        let data: [JSONValue] = keys.prefix(limit).compactMap { key in
            onlyKey ? ["id": JSONValue(Int64(key))] : state.items[key]
        }
        var answer: JSONObject = ["data": .array(data)]
        if query["meta"] != nil { answer["meta"] = ["filter_count": JSONValue(Int64(total))] }
        return .object(answer)
    }
}
