import BridgeConfig
import BridgeJSON
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// Event ids are unique per sink whatever the subscriptions, collection names and keys, stable across runs, and
/// safe in an HTTP header (README.md "Event ids").
@Suite struct EventIDTests {
    @Test func twoSubscriptionsOnOneCollectionGiveEachChangeTwoIds() async throws {
        let directus = FakeDirectus()
        let configs = [
            SubscriptionConfig(collection: "articles", uid: "articles"),
            SubscriptionConfig(collection: "tags", uid: "tags"),
            SubscriptionConfig(collection: "articles", uid: "articles_drafts\r\nx: 1"),
        ]
        let subscriptions = configs.map { ActivitySubscription($0, primaryKey: "id", among: configs) }
        let harness = try ReaderHarness(directus: directus, subscriptions: subscriptions)
        harness.start()
        try await harness.waitUntilCaughtUp()
        directus.commit(1, "create", "articles", "7", item: article(7))
        directus.commit(2, "create", "tags", "t", item: ["id": "t"])
        harness.wakeup.changeSeen(collection: "articles")
        let events = try await harness.collect(3)
        await harness.halt()
        #expect(events.map(\.subscription) == ["articles", "articles_drafts\r\nx: 1", "tags"])
        #expect(events.map(\.id) == ["act_1", "act_1_articles%5Fdrafts%0D%0Ax%3A%201", "act_2"])
        #expect(events.allSatisfy { $0.json["id"]?.stringValue == $0.id })
    }

    @Test func snapshotIdsCannotCollideWhateverTheNamesAndKeysHold() {
        let cases: [(collection: String, key: String)] = [
            ("blog", "posts_1"), ("blog_posts", "1"), ("blog", "posts%5F1"), ("blog%5Fposts", "1"),
            ("a", "b_c_d"), ("a_b", "c_d"), ("a_b_c", "d"), ("a", "line\r\nbreak"), ("a", "line%0D%0Abreak"),
            ("é", "1"), ("e\u{301}", "1"), ("a", ""), ("", "a"),
        ]
        var seen: [String: (String, String)] = [:]
        for (collection, key) in cases {
            for suffix in [nil, "second"] {
                let id = EventID.snapshot(
                    collection: collection, key: key, watermark: 42, subscriptionSuffix: suffix.map(EventID.component))
                #expect(seen[id] == nil, "\(id) for \(collection)/\(key) and \(seen[id].map { "\($0)" } ?? "")")
                seen[id] = (collection, key)
                #expect(id.utf8.allSatisfy { (0x21...0x7E).contains($0) }, "not header-safe: \(id)")
            }
        }
        #expect(EventID.snapshot(collection: "blog", key: "posts_1", watermark: 9, subscriptionSuffix: nil)
            == "snap_blog_posts%5F1_9")
        #expect(EventID.snapshot(collection: "articles", key: "12", watermark: 9, subscriptionSuffix: nil)
            == "snap_articles_12_9", "plain names and keys stay readable")
    }

    @Test func snapshotsOfTwoSubscriptionsOnOneCollectionGetDistinctIdsStableAcrossRuns() async throws {
        let directus = FakeDirectus()
        for id in 1...3 { directus.seed("articles", "\(id)", article(id)) }
        directus.commit(5, "create", "comments", "1", item: ["id": 1])
        let configs = [
            SubscriptionConfig(collection: "articles", uid: "all", snapshot: true),
            SubscriptionConfig(collection: "articles", uid: "titles", snapshot: true),
        ]
        let subscriptions = configs.map { ActivitySubscription($0, primaryKey: "id", among: configs) }
        let first = try ReaderHarness(directus: directus, subscriptions: subscriptions, snapshotPageSize: 2)
        first.start()
        // Cut short before the page was durable (a crash): the next run starts both snapshots again.
        let partial = try #require(try await first.next(accept: false, timeout: .seconds(10)))
        await first.halt()

        let second = try ReaderHarness(
            directus: directus, subscriptions: subscriptions, directory: first.directory, snapshotPageSize: 2)
        second.start()
        let all = try await second.collect(6)
        await second.halt()
        let expected = (1...3).map { "snap_articles_\($0)_5" } + (1...3).map { "snap_articles_\($0)_5_titles" }
        #expect(all.map(\.id) == expected)
        #expect(Set(partial.events.map(\.id)).isSubset(of: expected), "the same ids in every run")
    }
}
