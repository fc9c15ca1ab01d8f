import BridgeJSON
import Testing

@testable import BridgeActivity
@testable import BridgeEvents

/// A `resync` asked while the reader waits for its sink (nobody takes from the queue) is taken at once — the fresh
/// watermark saved, the request cleared — whatever the reader waits in (contract, "Commands": 10 seconds), and what
/// waited is still queued before the new snapshot's lines, with the changes up to its watermark.
@Suite struct ResyncWhileWaitingTests {
    /// The snapshot of `articles` waits to queue a page; a request of `comments` is taken, and its snapshot follows
    /// the articles' once the sink takes again (before, the request waited for the articles' snapshot to be durable).
    @Test func aResyncOfAnotherSubscriptionIsTakenWhileASnapshotPageWaits() async throws {
        let directus = FakeDirectus()
        for id in 1...6 { directus.seed("articles", "\(id)", article(id)) }
        for id in 1...2 { directus.seed("comments", "\(id)", ["id": JSONValue(Int64(id))]) }
        directus.commit(1, "update", "articles", "1", item: article(1))
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription(snapshot: true), subscription("comments")],
            snapshotPageSize: 2,
            capacity: 1
        )
        harness.start()
        // The first page is queued; the second waits for room.
        try await harness.wait { harness.queue.depth > 0 }
        directus.commit(2, "update", "comments", "1", item: ["id": JSONValue(Int64(1)), "text": .string("changed")])
        try harness.requestResync("comments")
        try await harness.wait {
            harness.store.subscriptions["comments"] == SubscriptionCursorState(startID: 1, snapshotWatermark: 2)
        }
        #expect(
            harness.store.subscriptions["comments"]
                == SubscriptionCursorState(startID: 1, snapshotWatermark: 2,
                    collection: "comments", snapshotQuery: "{}"),
            "\(String(describing: harness.store.subscriptions["comments"]))"
        )
        #expect(harness.store.subscriptions["articles"]?.snapshotDone == false)

        let events = try await harness.collect(9)
        #expect(
            events.map(\.id)
                == (1...6).map { "snap_articles_\($0)_1" } + ["act_2"] + (1...2).map { "snap_comments_\($0)_2" },
            "the change at 2 is streamed before the comments' snapshot (ResyncGapTests)"
        )
        // The comments' last page is empty (2 items, pages of 2): its completion comes in a batch of its own, which
        // `collect`'s short settle can miss on a loaded machine (failed so at load 21), so it is taken here.
        let deadline = ContinuousClock.now + .seconds(10)
        while harness.store.subscriptions["comments"]?.snapshotDone != true && ContinuousClock.now < deadline {
            _ = try await harness.next(timeout: .milliseconds(50))
        }
        #expect(harness.store.subscriptions["articles"]?.snapshotDone == true)
        #expect(harness.store.subscriptions["comments"]?.snapshotDone == true)
        await harness.halt()
    }

    /// The stream waits to queue a page of changes; a request of `articles` is taken, the page is still queued, and
    /// the snapshot follows it (before, the request waited until the page was queued).
    @Test func aResyncIsTakenWhileTheStreamWaitsForTheQueue() async throws {
        let directus = FakeDirectus()
        for id in 1...6 { directus.commit(Int64(id), "create", "articles", "\(id)", item: article(id)) }
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription()],
            directory: try ReaderHarness.stateFromTheStart(),
            pageSize: 2,
            capacity: 1
        )
        harness.start()
        // The first page is queued and the second read: the reader hands it over, and waits for room.
        try await harness.wait { harness.registry.render().contains("directus_bridge_activity_reads_total 2\n") }
        #expect(harness.queue.depth == 2)
        try harness.requestResync("articles")
        try await harness.wait {
            harness.store.subscriptions["articles"] == SubscriptionCursorState(startID: 0, snapshotWatermark: 6)
        }
        #expect(
            harness.store.subscriptions["articles"]
                == SubscriptionCursorState(startID: 0, snapshotWatermark: 6,
                    collection: "articles", snapshotQuery: "{}"),
            "\(String(describing: harness.store.subscriptions["articles"]))"
        )

        let events = try await harness.collect(12)
        #expect(
            events.map(\.id) == (1...6).map { "act_\($0)" } + (1...6).map { "snap_articles_\($0)_6" },
            "the waiting page is queued, the changes up to the watermark follow, then the snapshot (ResyncGapTests)"
        )
        try await harness.wait { harness.store.subscriptions["articles"]?.snapshotDone == true }
        #expect(harness.store.subscriptions["articles"]?.snapshotDone == true)
        await harness.halt()
    }
}
