import BridgeJSON
import BridgeSystem
import Testing

@testable import BridgeDirectus
@testable import BridgeActivity

/// Answers with fewer rows than asked for while more are there (`SizedDirectus.cap`: a gateway capping page sizes),
/// and Directus's `QUERY_LIMIT_MAX` (`SizedDirectus.queryLimitMax`: a larger `limit` refused with 400). Each read
/// took a short answer for everything there was: a snapshot page, the items of a batch of changes (the rest counted
/// as deleted, or — with a filter — as no longer matching: no line), the existence check. Directus's refusal failed
/// every read.
@Suite struct CappedAnswerTests {
    static let query = ItemQuery(collection: "articles", primaryKey: "id", query: nil)

    static func directus(items: Int, cap: Int? = nil, queryLimitMax: Int? = nil) -> SizedDirectus {
        let directus = SizedDirectus(defaultLimit: 16 << 20, cap: cap, queryLimitMax: queryLimitMax)
        for key in 1...items { directus.create(Int64(key), key: key, size: 10) }
        return directus
    }

    @Test func aSnapshotPageGoesOnAfterAShortAnswerUntilAnEmptyOne() async throws {
        let source = DirectusActivitySource(api: Self.directus(items: 180, cap: 50).api)
        let first = try await source.itemsPage(Self.query, after: nil, limit: 100)
        #expect(first.entries.count == 100, "a full page: the reader goes on")
        let last = try await source.itemsPage(Self.query, after: JSONValue(Int64(100)), limit: 100)
        #expect(last.entries.count == 80, "the last page, ended by an empty answer")
    }

    @Test func keysACappedAnswerLeftOutAreAskedForAgain() async throws {
        let directus = Self.directus(items: 300, cap: 40)
        let source = DirectusActivitySource(api: directus.api)
        let keys = (1...300).map(String.init) + ["999"]  // 999 is not there
        let read = try await source.items(Self.query, keys: keys)
        #expect(read.items.compactMap { Self.query.key(of: $0) }.sorted() == (1...300).map(String.init).sorted())
        let existing = try await source.existingKeys(Self.query, keys: keys)
        #expect(existing == Set((1...300).map { ItemKey(String($0)) }))
    }

    @Test func directusQueryLimitMaxIsLearnedFromItsRefusalAndEveryReadKeepsToIt() async throws {
        let directus = Self.directus(items: 260, queryLimitMax: 50)
        let source = DirectusActivitySource(api: directus.api)
        let rows = try await source.activity(after: 0, limit: 200)
        #expect(rows.map(\.id) == (1...200).map { Int64($0) })
        #expect(source.api.rowLimit.maximum == 50)
        let page = try await source.itemsPage(Self.query, after: nil, limit: 500)
        #expect(page.entries.count == 260)
        let read = try await source.items(Self.query, keys: (1...260).map(String.init))
        #expect(read.items.count == 260)
        #expect(directus.state.withLock { $0.requests["refused"] } == 1, "refused once, then asked within it")
    }

    @Test func theLimitIsReadFromServerInfoAndHeldInEveryLimitSent() {
        let limit = RowLimit()
        #expect(limit.learn(info: ["queryLimit": ["default": 100, "max": -1]]) == nil)
        #expect(limit.maximum == nil)
        #expect(limit.apply(to: [("limit", "500")]).first?.1 == "500")
        #expect(limit.learn(info: ["queryLimit": ["default": 100, "max": 100]]) == 100)
        let applied = limit.apply(to: [("filter", "{}"), ("limit", "500"), ("sort", "id")])
        #expect(applied.map(\.1) == ["{}", "100", "id"])
        #expect(limit.apply(to: [("limit", "-1")]).first?.1 == "-1", "Directus holds -1 to its maximum itself")
        #expect(limit.capped(500) == 100 && limit.capped(7) == 7)
        #expect(RowLimit.limit(named: #"Invalid query. "limit" must be less than or equal to 250."#) == 250)
        #expect(RowLimit.limit(named: #""limit" must be less than or equal to 99999999999999999999999"#) == nil)
        #expect(RowLimit.limit(named: "Invalid query. Invalid filter object.") == nil)
    }
}
