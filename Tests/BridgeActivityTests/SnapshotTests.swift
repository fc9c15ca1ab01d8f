import BridgeJSON
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

@Suite struct SnapshotTests {
    @Test func aSnapshotEmitsEveryMatchingItemThenStreamsFromItsWatermark() async throws {
        let directus = FakeDirectus()
        directus.setFilter("articles") { $0["status"] == "published" }
        for id in 1...7 { directus.seed("articles", "\(id)", article(id, status: id == 4 ? "draft" : "published")) }
        directus.commit(1, "update", "articles", "1", item: article(1, title: "before"))
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription(filtered: true, snapshot: true)],
            snapshotPageSize: 3
        )
        harness.start()
        let snapshot = try await harness.collect(6)
        #expect(snapshot.map(\.id) == [1, 2, 3, 5, 6, 7].map { "snap_articles_\($0)_1" })
        #expect(snapshot.allSatisfy { $0.event == .snapshot && $0.origin == .snapshot && $0.seq == nil })
        #expect(snapshot.first?.json["data"] == article(1, title: "before"))
        try await harness.wait { harness.store.subscriptions["articles"]?.snapshotDone == true }
        #expect(
            harness.store.subscriptions["articles"]
                == SubscriptionCursorState(
                    startID: 1,
                    snapshotWatermark: 1,
                    snapshotDone: true,
                    collection: "articles",
                    snapshotQuery: #"{"filter":{"status":{"_eq":"published"}}}"#
                )
        )

        directus.commit(2, "update", "articles", "2", item: article(2, title: "after"))
        harness.wakeup.changeSeen(collection: "articles")
        #expect(try await harness.collect(1).map(\.id) == ["act_2"])
        await harness.halt()
    }

    /// A `filter_count` from the server is only a progress estimate: any value, however hostile, leaves the
    /// snapshot as it is (Int.min minus the items done overflowed before).
    @Test(arguments: [Int.min, Int.max, -1, 0, 2])
    func anyReportedTotalLeavesTheSnapshotIntact(total: Int) async throws {
        let directus = FakeDirectus()
        for id in 1...5 { directus.seed("articles", "\(id)", article(id)) }
        directus.commit(1, "update", "articles", "1", item: article(1))
        directus.state.withLock { $0.reportedTotal = total }
        let harness = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], snapshotPageSize: 2,
            progressInterval: .zero  // a progress line (with what remains) after every page
        )
        harness.start()
        let snapshot = try await harness.collect(5)
        #expect(snapshot.map(\.id) == (1...5).map { "snap_articles_\($0)_1" })
        try await harness.wait { harness.store.subscriptions["articles"]?.snapshotDone == true }
        await harness.halt()
    }

    /// A server that answers every page from the start (it ignores the keyset position) must not make the
    /// snapshot run forever: a page that does not move past the previous one ends it with an error.
    @Test func aPageThatDoesNotAdvanceEndsTheSnapshot() async throws {
        let directus = FakeDirectus()
        for id in 1...5 { directus.seed("articles", "\(id)", article(id)) }
        directus.commit(1, "update", "articles", "1", item: article(1))
        directus.state.withLock { $0.ignoresPagePosition = true }
        let harness = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], snapshotPageSize: 2)
        harness.start()
        let first = try #require(try await harness.next())
        #expect(first.events.map(\.id) == ["snap_articles_1_1", "snap_articles_2_1"])
        // The reader moves on to the activity log once the snapshot ends (it never did before).
        try await harness.wait { directus.state.withLock { $0.activityReads } > 0 }
        let (pages, reads) = directus.state.withLock { ($0.pageReads, $0.activityReads) }
        await harness.halt()
        #expect(reads > 0)
        #expect(pages == 2)
        #expect(harness.store.subscriptions["articles"]?.snapshotDone != true)
    }

    /// A crash before the sink made the first page durable (its progress never recorded): the next start takes the
    /// snapshot again from its first page, with the same ids. (A page recorded durable is not read again:
    /// `SnapshotResumeTests`.)
    @Test func aSnapshotCutShortRunsAgainWithTheSameIds() async throws {
        let directus = FakeDirectus()
        for id in 1...5 { directus.seed("articles", "\(id)", article(id)) }
        directus.commit(9, "create", "comments", "1", item: ["id": 1])
        let first = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription(snapshot: true)],
            snapshotPageSize: 2
        )
        first.start()
        let partial = try #require(try await first.next(accept: false, timeout: .seconds(10)))
        await first.halt()
        #expect(partial.events.map(\.id) == ["snap_articles_1_9", "snap_articles_2_9"])
        #expect(first.store.subscriptions["articles"]?.snapshotPending == true)

        directus.commit(10, "create", "comments", "2", item: ["id": 2])
        let second = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription(snapshot: true)],
            directory: first.directory,
            snapshotPageSize: 2
        )
        second.start()
        let all = try await second.collect(5)
        try await second.wait { second.store.subscriptions["articles"]?.snapshotDone == true }
        await second.halt()
        #expect(all.map(\.id) == (1...5).map { "snap_articles_\($0)_9" })
        #expect(second.store.subscriptions["articles"]?.snapshotDone == true)
    }

    @Test func aSubscriptionNewToTheStateStartsAtTheNewestId() async throws {
        let directus = FakeDirectus()
        let first = try ReaderHarness(directus: directus, subscriptions: [subscription()])
        first.start()
        try await first.waitUntilCaughtUp()
        await first.halt()
        directus.commit(1, "create", "tags", "a", item: ["id": "a"])
        directus.commit(2, "create", "articles", "2", item: article(2))
        let second = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription(), subscription("tags")],
            directory: first.directory
        )
        second.start()
        let events = try await second.collect(1)
        await second.halt()
        #expect(events.map(\.id) == ["act_2"], "the old subscription catches up; the new one starts at id 2")
        #expect(second.store.subscriptions["tags"]?.startID == 2)
    }
}
