import BridgeTestSupport
import Foundation
import Testing

/// Nothing outside a subscription's `query.fields` leaves the real binary (docs/configuration.md "What `fields` lets
/// out"), in either mode: every field the emulator holds for an article is written, only `id` and `title` may appear in
/// a line.
@Suite(.serialized) struct FieldSafetyEndToEndTests {
    private static let subscription = "  - collection: articles\n    query:\n      fields: [id, title]"
    private static let allowed: Set<String> = ["id", "title"]

    /// The member names of `field` (an object) in `event`, or nil when it is absent or not an object.
    private func keys(_ field: String, of event: [String: Any]) -> Set<String>? {
        (event[field] as? [String: Any]).map { Set($0.keys) }
    }

    @Test func activityModeDeltaAndRevisionSnapshotsCarryOnlyTheQueryFields() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let first = try BridgeProcess.run(
            config: activityConfig(url: emulator.url, pollInterval: "300ms", subscriptions: Self.subscription))
        #expect(first.waitUntilConnected(), "\(first.stderr)")

        let key = try emulator.create(
            "articles", ["title": "t1", "status": "draft", "body": "body one", "author": "ada"])
        try emulator.rest("PATCH", "/items/articles/\(key)", ["status": "published", "body": "body two"])
        try emulator.rest("PATCH", "/items/articles/\(key)", ["title": "t2", "body": "body three"])
        #expect(first.waitUntil { $0.events.count >= 3 }, "\(first.stderr)")
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0)
        let live = first.events
        try #require(live.count == 3)
        #expect(live.map { keys("delta", of: $0) } == [["title"], [], ["title"]], "only title of what was written")
        #expect((live[0]["delta"] as? [String: Any])?["title"] as? String == "t1")
        #expect(live.allSatisfy { keys("data", of: $0) == Self.allowed }, "Directus shapes data by the query")

        // Changed and deleted while the bridge is down: the backfilled create's data is the revision's snapshot.
        let gone = try emulator.create("articles", ["title": "gone", "status": "draft", "body": "secret body"])
        try emulator.rest("DELETE", "/items/articles/\(gone)")
        let second = try BridgeProcess.run(
            config: activityConfig(url: emulator.url, subscriptions: Self.subscription), in: first.directory)
        #expect(second.waitUntil { $0.events.count >= 2 }, "\(second.stderr)")
        second.send(SIGTERM)
        #expect(second.waitForExit() == 0)
        let backfilled = second.events
        try #require(backfilled.map { $0["event"] as? String } == ["create", "delete"])
        // Directus's create revision holds the written payload: an auto-increment key is not in it.
        #expect(keys("data", of: backfilled[0]).map { $0.contains("title") && $0.isSubset(of: Self.allowed) } == true)
        #expect(keys("delta", of: backfilled[0]) == ["title"])
        let everything = (live + backfilled).compactMap { try? JSONSerialization.data(withJSONObject: $0) }
        for line in everything.map({ String(decoding: $0, as: UTF8.self) }) {
            #expect(!line.contains("body") && !line.contains("draft") && !line.contains("ada"), "\(line)")
        }
    }

    @Test func liveModeDataCarriesOnlyTheQueryFields() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(config: liveConfig(url: emulator.url, subscriptions: Self.subscription))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let key = try emulator.create("articles", ["title": "t1", "status": "draft", "body": "secret body"])
        try emulator.rest("PATCH", "/items/articles/\(key)", ["status": "published", "body": "another"])
        try emulator.rest("DELETE", "/items/articles/\(key)")
        #expect(bridge.waitUntil { $0.events.count >= 3 }, "\(bridge.stderr)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        let events = bridge.events
        #expect(events.map { $0["event"] as? String } == ["create", "update", "delete"])
        #expect(events.prefix(2).allSatisfy { keys("data", of: $0) == Self.allowed }, "\(events)")
        #expect(events.allSatisfy { $0["delta"] == nil })
    }
}
