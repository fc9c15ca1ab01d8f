import BridgeJSON
import BridgeSystem
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// `ActivityEventBuilder` on its own: which (row, subscription) pairs give a line, in which order, with which
/// `data` — without the reader around it.
@Suite struct ActivityEventBuilderTests {
    let receivedAt = Timestamp(microsecondsSinceEpoch: 1_800_000_000_000_000)

    private func rows(_ directus: FakeDirectus) -> [ActivityRow] {
        directus.state.withLock { Array($0.rows.values) }
    }

    private func build(
        _ targets: [ActivityEventBuilder.Target], _ rows: [ActivityRow], _ directus: FakeDirectus
    ) async throws -> ActivityEventBuilder.Output {
        try await ActivityEventBuilder(targets: targets)
            .events(for: rows, origin: .backfill, source: directus, receivedAt: receivedAt)
    }

    /// Rows in any order come out in activity order; every row gives each matching subscription its own line
    /// (never coalesced, even for the same item), with the row's id, time and user.
    @Test func oneLinePerRowAndSubscriptionInActivityOrder() async throws {
        let directus = FakeDirectus()
        directus.commit(1, "create", "articles", "7", item: article(7, title: "a"))
        directus.commit(2, "update", "articles", "7", item: article(7, title: "b"), delta: ["title": "b"])
        directus.commit(3, "update", "articles", "7", item: article(7, title: "c"), delta: ["title": "c"])
        var second = subscription(uid: "second")
        second.idSuffix = "second"
        let output = try await build(
            [.init(subscription: subscription(), startID: 0), .init(subscription: second, startID: 0)],
            rows(directus).reversed(), directus)
        #expect(output.events.map(\.id) == ["act_1", "act_1_second", "act_2", "act_2_second", "act_3", "act_3_second"])
        #expect(output.events.map(\.seq) == [1, 1, 2, 2, 3, 3])
        #expect(output.events.allSatisfy { $0.origin == .backfill && $0.key == "7" && $0.collection == "articles" })
        #expect(output.events.map(\.subscription) == Array(repeating: ["articles", "second"], count: 3).flatMap(\.self))
        #expect(output.events.first?.time == Timestamp(microsecondsSinceEpoch: 1_700_000_000_001_000))
        // `data` is the item now (state-now semantics), `delta` what the row wrote (a create has none).
        #expect(output.events.map { $0.json["data"]?["title"] } == Array(repeating: "c", count: 6))
        let deltas: [JSONValue?] = [nil, nil, ["title": "b"], ["title": "b"], ["title": "c"], ["title": "c"]]
        #expect(output.events.map { $0.json["delta"] } == deltas)
        #expect(output.refused.isEmpty)
    }

    /// A subscription gets only rows after its start id and of its events; rows of other collections, without an
    /// item or of other actions give nothing.
    @Test func startIDsEventsAndCollectionsSelectTheRows() async throws {
        let directus = FakeDirectus()
        directus.commit(1, "create", "articles", "1", item: article(1))
        directus.commit(2, "create", "articles", "2", item: article(2))
        directus.commit(3, "delete", "articles", "1")
        directus.commit(4, "create", "tags", "t", item: ["id": "t"])
        directus.commit(5, "login", "directus_users", "u")
        let deletesOnly = subscription(uid: "deletes", events: [.delete])
        let targets: [ActivityEventBuilder.Target] = [
            .init(subscription: subscription(), startID: 1), .init(subscription: deletesOnly, startID: 0),
        ]
        let output = try await build(targets, rows(directus), directus)
        let pairs = output.events.map { "\($0.seq ?? 0):\($0.subscription)" }
        #expect(pairs == ["2:articles", "3:articles", "3:deletes"])
        let builder = ActivityEventBuilder(targets: targets)
        #expect(builder.matches(ActivityRow(id: 9, action: "create", collection: "articles", item: "9")))
        #expect(!builder.matches(ActivityRow(id: 1, action: "create", collection: "articles", item: "1")))
        #expect(!builder.matches(ActivityRow(id: 9, action: "create", collection: "articles", item: nil)))
        #expect(!builder.matches(ActivityRow(id: 9, action: "create", collection: "tags", item: "t")))
        #expect(!builder.matches(ActivityRow(id: 9, action: "login", collection: "articles", item: "9")))
        #expect(builder.startID(of: "articles") == 1 && builder.startID(of: "deletes") == 0)
        #expect(builder.startID(of: "tags") == nil)
    }

    /// An item that no longer matches the filter gives no line (Directus's socket gives none either); an item that
    /// is gone gives its revision snapshot, or null without one; a delete gives the key and null.
    @Test func filteredOutGoneAndDeletedItems() async throws {
        let directus = FakeDirectus()
        directus.setFilter("articles") { $0["status"] == "published" }
        directus.commit(1, "create", "articles", "1", item: article(1, status: "draft"))  // exists, filtered out
        directus.commit(2, "create", "articles", "2", item: article(2, title: "kept"))
        directus.commit(3, "delete", "articles", "2")  // gone after its create: the create's snapshot
        directus.commit(4, "update", "articles", "5", item: article(5))
        directus.state.withLock { state in  // gone, and Directus kept no revision for it
            state.items["articles"]?[ItemKey("5")] = nil
            state.snapshots[4] = nil
        }
        let output = try await build(
            [.init(subscription: subscription(filtered: true), startID: 0)], rows(directus), directus)
        #expect(output.events.map(\.id) == ["act_2", "act_3", "act_4"])
        #expect(output.events[0].json["data"]?["title"] == "kept")
        #expect(output.events[1].json["data"] == .null && output.events[1].json["key"] == "2")
        #expect(output.events[1].event == .delete)
        #expect(output.events[2].json["data"] == .null)
    }

    /// A subscription Directus refuses to read is reported and gets no line; the others still get theirs.
    @Test func aRefusedSubscriptionIsReportedAndTheOthersGoOn() async throws {
        let directus = FakeDirectus()
        directus.commit(1, "create", "tags", "t", item: ["id": "t"])
        directus.commit(2, "create", "articles", "7", item: article(7))
        directus.state.withLock { $0.forbidden = ["tags"] }
        let output = try await build(
            [.init(subscription: subscription("tags"), startID: 0), .init(subscription: subscription(), startID: 0)],
            rows(directus), directus)
        #expect(output.events.map(\.id) == ["act_2"])
        #expect(output.refused.keys.sorted() == ["tags"])
        #expect(output.refused["tags"]?.isForbidden == true)
    }

    /// A failure that may pass (Directus unreachable) is thrown, so the page is read again.
    @Test func aRetriableFailureIsThrown() async throws {
        let directus = FakeDirectus()
        directus.commit(1, "create", "articles", "7", item: article(7))
        directus.failNext(1)
        await #expect(throws: DirectusError.self) {
            _ = try await build([.init(subscription: subscription(), startID: 0)], rows(directus), directus)
        }
        let retried = try await build([.init(subscription: subscription(), startID: 0)], rows(directus), directus)
        #expect(retried.events.map(\.id) == ["act_1"])
    }
}
