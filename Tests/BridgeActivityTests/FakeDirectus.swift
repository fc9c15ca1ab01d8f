import BridgeJSON
import BridgeSystem
import Synchronization

@testable import BridgeActivity
@testable import BridgeCore
@testable import BridgeDirectus
@testable import BridgeEvents
@testable import BridgeSinks

/// An in-memory Directus for the activity reader: visible activity rows, items per collection, revision snapshots,
/// and a filter per collection standing in for the subscription's `query.filter`.
///
/// Items are kept by their key's bytes (`ItemKey`) and snapshot pages ordered as a SQL database orders primary keys
/// (`keyOrder`): integer keys by value, text keys byte for byte, so a collection may hold "é" and "e\u{301}" as two
/// items, as Directus does.
final class FakeDirectus: ActivitySource {
    struct State {
        var rows: [Int64: ActivityRow] = [:]
        var items: [String: [ItemKey: JSONValue]] = [:]
        var snapshots: [Int64: JSONValue] = [:]
        var matches: [String: @Sendable (JSONValue) -> Bool] = [:]
        var failNextReads = 0
        /// What the failing reads throw (a transport failure unless set).
        var failure = DirectusError(kind: .transport, message: "connection refused", operation: "GET /activity")
        var activityReads = 0
        var gapReads = 0
        var itemReads = 0
        var pageReads = 0
        var existenceReads = 0
        var forbidden: Set<String> = []
        /// Sort watcher: reads of a collection's sort order, and a server that ignores the page cursor.
        var orderReads = 0
        var ignoreCursor = false
        /// A hostile or broken server's pagination: the `filter_count` it reports, and whether it ignores the
        /// keyset position (answering every page from the start).
        var reportedTotal: Int?
        var ignoresPagePosition = false
        /// Rows committed just before the snapshot page of that number (1 for the first) is read: a write racing a
        /// snapshot held back by its sink.
        var beforePage: [Int: [(id: Int64, action: String, collection: String, key: String)]] = [:]
    }

    let state = Mutex(State())

    /// Makes row `id` visible (committed), with the item's state as it is after the change.
    func commit(
        _ id: Int64,
        _ action: String,
        _ collection: String,
        _ key: String,
        item: JSONValue? = nil,
        delta: JSONValue? = nil,
        user: String? = "user-1"
    ) {
        state.withLock { state in
            Self.commit(id, action, collection, key, item: item, delta: delta, user: user, in: &state)
        }
    }

    /// Commits `rows` and then deletes the rows below `id` (Directus's retention job) as one change, so a running
    /// reader sees all of it or none: committed one by one, a reader polling in between read the rows the test meant
    /// retention to delete before it got to them (seen under load, `RetentionTests`).
    func commit(
        _ rows: [(id: Int64, action: String, collection: String, key: String, item: JSONValue)],
        thenRetainFrom id: Int64
    ) {
        state.withLock { state in
            for row in rows {
                Self.commit(
                    row.id,
                    row.action,
                    row.collection,
                    row.key,
                    item: row.item,
                    delta: nil,
                    user: "user-1",
                    in: &state
                )
            }
            state.rows = state.rows.filter { $0.key >= id }
        }
    }

    private static func commit(
        _ id: Int64,
        _ action: String,
        _ collection: String,
        _ key: String,
        item: JSONValue?,
        delta: JSONValue?,
        user: String?,
        in state: inout State
    ) {
        state.rows[id] = ActivityRow(
            id: id,
            action: action,
            collection: collection,
            item: key,
            timestamp: Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000 + id * 1000),
            user: user,
            delta: delta
        )
        if action == "delete" {
            state.items[collection]?[ItemKey(key)] = nil
        } else if let item {
            state.items[collection, default: [:]][ItemKey(key)] = item
            state.snapshots[id] = item
        }
    }

    /// Puts an item in place without activity (seed data, untracked writes).
    func seed(_ collection: String, _ key: String, _ item: JSONValue) {
        state.withLock { $0.items[collection, default: [:]][ItemKey(key)] = item }
    }

    func setFilter(_ collection: String, _ matches: @escaping @Sendable (JSONValue) -> Bool) {
        state.withLock { $0.matches[collection] = matches }
    }

    func failNext(_ count: Int) { state.withLock { $0.failNextReads = count } }

    private func maybeFail() throws(DirectusError) {
        let failure = state.withLock { state -> DirectusError? in
            guard state.failNextReads > 0 else { return nil }
            state.failNextReads -= 1
            return state.failure
        }
        if let failure { throw failure }
    }

    func newestActivityID() async throws(DirectusError) -> Int64 {
        try maybeFail()
        return state.withLock { $0.rows.keys.max() ?? 0 }
    }

    func oldestActivityID() async throws(DirectusError) -> Int64? {
        try maybeFail()
        return state.withLock { $0.rows.keys.min() }
    }

    /// Deletes the rows below `id`, as Directus's retention job does.
    func retain(from id: Int64) {
        state.withLock { state in state.rows = state.rows.filter { $0.key >= id } }
    }

    func activity(after id: Int64, limit: Int) async throws(DirectusError) -> [ActivityRow] {
        try maybeFail()
        return state.withLock { state in
            state.activityReads += 1
            return Array(state.rows.values.filter { $0.id > id }.sorted { $0.id < $1.id }.prefix(limit))
        }
    }

    func activity(in ranges: [ClosedRange<Int64>], limit: Int) async throws(DirectusError) -> [ActivityRow] {
        try maybeFail()
        return state.withLock { state in
            state.gapReads += 1
            let inside = state.rows.values.filter { row in ranges.contains { $0.contains(row.id) } }
            return Array(inside.sorted { $0.id < $1.id }.prefix(limit))
        }
    }

    func revisionSnapshots(activityIDs: [Int64]) async throws(DirectusError) -> [Int64: JSONValue] {
        state.withLock { state in
            var found: [Int64: JSONValue] = [:]
            for id in activityIDs { found[id] = state.snapshots[id] }
            return found
        }
    }

    func items(_ query: ItemQuery, keys: [String]) async throws(DirectusError) -> ItemRead {
        try maybeFail()
        if state.withLock({ $0.forbidden.contains(query.collection) }) {
            throw DirectusError(
                kind: .rejected,
                status: 403,
                code: "FORBIDDEN",
                message: "You don't have permission to access this.",
                operation: "GET /items/\(query.collection)"
            )
        }
        return state.withLock { state in
            state.itemReads += 1
            let matches = state.matches[query.collection] ?? { _ in true }
            let found = keys.compactMap { state.items[query.collection]?[ItemKey($0)] }.filter(matches)
            return ItemRead(items: found.map { Self.select(query, $0) })
        }
    }

    /// The item with only the query's top-level fields, as Directus answers `fields=…`.
    static func select(_ query: ItemQuery, _ item: JSONValue) -> JSONValue {
        guard let fields = query.fields, !fields.contains("*"), case .object(let object) = item else { return item }
        var selected = JSONObject()
        for member in object where fields.contains(member.key) { selected[member.key] = member.value }
        return .object(selected)
    }

    func existingKeys(_ query: ItemQuery, keys: [String]) async throws(DirectusError) -> Set<ItemKey> {
        state.withLock { state in
            state.existenceReads += 1
            return Set(keys.map(ItemKey.init).filter { state.items[query.collection]?[$0] != nil })
        }
    }

    func itemsPage(_ query: ItemQuery, after: JSONValue?, limit: Int) async throws(DirectusError) -> ItemsPage {
        try maybeFail()
        if let after, Self.keyOrder(after, after) == nil {
            // Directus refuses a filter value it cannot compare a key with (an object, an array, a boolean).
            throw DirectusError(
                kind: .rejected, status: 400, code: "INVALID_QUERY", message: "Invalid query. Invalid filter value.",
                operation: "GET /items/\(query.collection)")
        }
        return state.withLock { state in
            state.pageReads += 1
            for row in state.beforePage.removeValue(forKey: state.pageReads) ?? [] {
                Self.commit(
                    row.id, row.action, row.collection, row.key, item: nil, delta: nil, user: "user-1", in: &state)
            }
            let matches = state.matches[query.collection] ?? { _ in true }
            let all = (state.items[query.collection] ?? [:]).values.filter(matches).sorted {
                Self.keyOrder($0[query.primaryKey] ?? .null, $1[query.primaryKey] ?? .null) ?? false
            }
            let start = state.ignoresPagePosition ? nil : after
            let page = all.filter { item in
                start.map { Self.keyOrder($0, item[query.primaryKey] ?? .null) ?? false } ?? true
            }.prefix(limit)
            let total = state.reportedTotal ?? (after == nil ? all.count : nil)
            return ItemsPage(items: page.map { Self.select(query, $0) }, total: total)
        }
    }

    /// Whether primary key `left` sorts before `right` as a SQL database compares them (`filter[pk][_gt]`, `sort=pk`):
    /// numbers by value, text byte for byte (UTF-8, a binary collation), any number before any text (SQLite's order
    /// of mixed types); false against `null` (SQL's `NULL` compares as unknown); nil for values no key is compared
    /// with (objects, arrays, booleans).
    static func keyOrder(_ left: JSONValue, _ right: JSONValue) -> Bool? {
        switch (left, right) {
        case (.number(let a), .number(let b)):
            if let a = a.int64Value, let b = b.int64Value { return a < b }
            return a.doubleValue < b.doubleValue
        case (.string(let a), .string(let b)): return a.utf8.lexicographicallyPrecedes(b.utf8)
        case (.number, .string): return true
        case (.string, .number): return false
        case (.null, .number), (.null, .string), (.number, .null), (.string, .null), (.null, .null): return false
        default: return nil
        }
    }
}

/// An article item with integer key `id`.
func article(_ id: Int, title: String = "t", status: String = "published") -> JSONValue {
    ["id": JSONValue(Int64(id)), "title": .string(title), "status": .string(status)]
}
