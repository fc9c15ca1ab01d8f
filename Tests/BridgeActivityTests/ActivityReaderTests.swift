import BridgeJSON
import BridgeSystem
import BridgeTestSupport
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

@Suite struct ActivityReaderTests {
    @Test func changesBecomeOneLinePerRowInActivityOrder() async throws {
        let directus = FakeDirectus()
        directus.commit(1, "create", "articles", "1", item: article(1))
        directus.seed("articles", "11", article(11))
        let harness = try ReaderHarness(directus: directus, subscriptions: [subscription(fields: ["title"])])
        harness.start()
        try await harness.waitUntilCaughtUp()
        #expect(harness.store.cursor?.committed == 1, "the first start begins at the newest id: no history replay")

        directus.commit(2, "create", "articles", "10", item: article(10, title: "new"), delta: ["title": "new"])
        directus.commit(3, "update", "articles", "10", item: article(10, title: "newer"), delta: ["title": "newer"])
        directus.commit(4, "delete", "articles", "11")
        directus.commit(5, "create", "comments", "1", item: ["id": 1])
        directus.commit(6, "login", "directus_users", "u")
        harness.wakeup.changeSeen(collection: "articles")
        let events = try await harness.collect(3)
        await harness.halt()

        try #require(events.map(\.id) == ["act_2", "act_3", "act_4"])
        #expect(events.map(\.event) == [.create, .update, .delete])
        #expect(events.map(\.seq) == [2, 3, 4])
        let first = events[0].json
        // `data` is the item now, with the query's fields only (the key the reader added is removed again).
        #expect(first["data"] == ["title": "newer"])
        #expect(first["delta"] == ["title": "new"])
        #expect(first["user"] == "user-1")
        #expect(first["origin"] == "live")
        #expect(first["time"]?.stringValue == Timestamp(microsecondsSinceEpoch: 1_700_000_000_002_000).rfc3339)
        #expect(events[2].json["data"] == .null)
        #expect(events[2].json["delta"] == nil)
        #expect(harness.store.cursor?.committed == 6, "rows of other collections and actions are resolved too")
    }

    @Test func aLateCommitIsDeliveredOnceAndNothingIsSkipped() async throws {
        let directus = FakeDirectus()
        let harness = try ReaderHarness(directus: directus, subscriptions: [subscription()])
        harness.start()
        try await harness.waitUntilCaughtUp()
        directus.commit(1, "create", "articles", "1", item: article(1))
        directus.commit(3, "create", "articles", "3", item: article(3))  // id 2 is still in an open transaction
        harness.wakeup.changeSeen(collection: "articles")
        #expect(try await harness.collect(2).map(\.id) == ["act_1", "act_3"])
        #expect(harness.store.cursor == ActivityCursor(committed: 1, resolvedAbove: [3...3]))

        directus.commit(2, "create", "articles", "2", item: article(2))
        directus.commit(4, "update", "articles", "1", item: article(1))
        harness.wakeup.changeSeen(collection: "articles")
        #expect(try await harness.collect(2).map(\.id) == ["act_2", "act_4"])
        harness.wakeup.changeSeen(collection: "articles")
        #expect(try await harness.collect(0, settle: .milliseconds(300)).isEmpty)
        await harness.halt()
        #expect(harness.store.cursor == ActivityCursor(committed: 4))
    }

    @Test func aGapThatNeverCommitsIsAbandonedAfterTheTimeout() async throws {
        let directus = FakeDirectus()
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription()],
            gapTimeout: .milliseconds(50)
        )
        harness.start()
        try await harness.waitUntilCaughtUp()
        directus.commit(1, "create", "articles", "1", item: article(1))
        directus.commit(3, "create", "articles", "3", item: article(3))
        harness.wakeup.changeSeen(collection: "articles")
        let first = try #require(try await harness.next(timeout: .seconds(10)))
        #expect(first.events.map(\.id) == ["act_1", "act_3"])
        #expect(first.progress?.abandoned == [])
        try await Task.sleep(for: .milliseconds(60))
        harness.wakeup.changeSeen(collection: "articles")
        let batch = try #require(try await harness.next(timeout: .seconds(10)))
        await harness.halt()
        #expect(batch.progress?.abandoned == [2...2])
        #expect(harness.store.cursor == ActivityCursor(committed: 3))
    }

    @Test func filteredOutItemsGiveNoLineAndGoneItemsCarryTheirRevision() async throws {
        let directus = FakeDirectus()
        directus.setFilter("articles") { $0["status"] == "published" }
        let harness = try ReaderHarness(directus: directus, subscriptions: [subscription(filtered: true)])
        harness.start()
        try await harness.waitUntilCaughtUp()
        directus.commit(1, "create", "articles", "20", item: article(20, status: "draft"))
        directus.commit(2, "update", "articles", "20", item: article(20, status: "archived"))
        directus.commit(3, "create", "articles", "21", item: article(21, title: "brief"))
        directus.commit(4, "delete", "articles", "21")
        harness.wakeup.changeSeen(collection: "articles")
        let events = try await harness.collect(2)
        try #require(events.map(\.id) == ["act_3", "act_4"], "item 20 exists but does not match: no lines")
        #expect(events[0].json["data"] == article(21, title: "brief"), "gone: the revision's snapshot")
        #expect(events[1].json["data"] == .null)

        directus.commit(5, "delete", "articles", "20")  // deletes pass whatever the filter, like Directus's socket
        directus.commit(6, "create", "articles", "22", item: article(22))
        directus.commit(7, "delete", "articles", "22")
        directus.state.withLock { $0.snapshots[6] = nil }  // no revision kept (accountability "activity")
        harness.wakeup.changeSeen(collection: "articles")
        let later = try await harness.collect(3)
        await harness.halt()
        try #require(later.map(\.id) == ["act_5", "act_6", "act_7"])
        #expect(later[1].json["data"] == .null, "gone without a revision: null")
    }

    @Test func withoutAFilterAMissingItemIsGoneWithoutAskingAgain() async throws {
        let directus = FakeDirectus()
        let harness = try ReaderHarness(directus: directus, subscriptions: [subscription()])
        harness.start()
        try await harness.waitUntilCaughtUp()
        directus.commit(1, "create", "articles", "5", item: article(5, title: "brief"))
        directus.commit(2, "delete", "articles", "5")
        harness.wakeup.changeSeen(collection: "articles")
        let events = try await harness.collect(2)
        await harness.halt()
        try #require(events.map(\.id) == ["act_1", "act_2"])
        #expect(events[0].json["data"] == article(5, title: "brief"))
        #expect(directus.state.withLock { $0.existenceReads } == 0)
    }

    @Test func aSubscriptionWhoseItemsAreForbiddenDoesNotStallTheOthers() async throws {
        let directus = FakeDirectus()
        directus.state.withLock { $0.forbidden = ["secrets"] }
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription("secrets"), subscription()]
        )
        harness.start()
        try await harness.waitUntilCaughtUp()
        directus.commit(1, "create", "secrets", "1", item: article(1))
        directus.commit(2, "create", "articles", "2", item: article(2))
        directus.commit(3, "delete", "secrets", "1")
        harness.wakeup.changeSeen(collection: "articles")
        let events = try await harness.collect(1)
        await harness.halt()
        #expect(events.map(\.id) == ["act_2"])
        #expect(harness.store.cursor?.committed == 3)
        #expect(harness.registry.render().contains("directus_bridge_activity_refused_reads_total 1"))
    }

    @Test func subscriptionsEmitOnlyTheirEvents() async throws {
        let directus = FakeDirectus()
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription(events: [.create]), subscription("tags", events: [.delete])]
        )
        harness.start()
        try await harness.waitUntilCaughtUp()
        directus.commit(1, "create", "articles", "1", item: article(1))
        directus.commit(2, "update", "articles", "1", item: article(1))
        directus.commit(3, "create", "tags", "7", item: article(7))
        directus.commit(4, "delete", "tags", "7")
        harness.wakeup.changeSeen(collection: "articles")
        let events = try await harness.collect(2)
        await harness.halt()
        #expect(events.map(\.id) == ["act_1", "act_4"])
        #expect(events.map(\.subscription) == ["articles", "tags"])
    }

    @Test func catchingUpIsBackfillUntilAShortPageThenLive() async throws {
        let directus = FakeDirectus()
        for id in 1...5 { directus.commit(Int64(id), "create", "articles", "\(id)", item: article(id)) }
        let directory = try ReaderHarness.stateFromTheStart()
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription()],
            directory: directory,
            pageSize: 2
        )
        harness.start()
        let backfill = try await harness.collect(5)
        #expect(backfill.map(\.id) == ["act_1", "act_2", "act_3", "act_4", "act_5"])
        #expect(backfill.allSatisfy { $0.origin == .backfill })
        try await harness.waitUntilCaughtUp()
        directus.commit(6, "create", "articles", "6", item: article(6))
        harness.wakeup.changeSeen(collection: "articles")
        let live = try await harness.collect(1)
        #expect(live.map(\.id) == ["act_6"])
        #expect(live.first?.origin == .live)

        // A reconnect starts catching up again; so does a socket that is down.
        directus.commit(7, "create", "articles", "7", item: article(7))
        harness.wakeup.socketReconnected()
        #expect(try await harness.collect(1).first?.origin == .backfill)
        harness.health.update { $0.connected = false }
        directus.commit(8, "create", "articles", "8", item: article(8))
        harness.wakeup.changeSeen(collection: "articles")
        #expect(try await harness.collect(1).first?.origin == .backfill)
        await harness.halt()
        #expect(harness.registry.render().contains("directus_bridge_backfill_events_total 7"))
    }

    @Test func aRestartRereadsOnlyWhatTheSinksDidNotAccept() async throws {
        let directus = FakeDirectus()
        let first = try ReaderHarness(directus: directus, subscriptions: [subscription()])
        first.start()
        try await first.waitUntilCaughtUp()
        for id in 1...3 { directus.commit(Int64(id), "create", "articles", "\(id)", item: article(id)) }
        first.wakeup.changeSeen(collection: "articles")
        #expect(try await first.collect(3, accept: true).count == 3)
        for id in 4...6 { directus.commit(Int64(id), "create", "articles", "\(id)", item: article(id)) }
        first.wakeup.changeSeen(collection: "articles")
        let unaccepted = try await first.collect(3, accept: false)  // written, then the bridge dies before recording
        await first.halt()

        let second = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription()],
            directory: first.directory
        )
        second.start()
        let again = try await second.collect(3)
        await second.halt()
        #expect(again.map(\.id) == unaccepted.map(\.id))
        #expect(again.map(\.id) == ["act_4", "act_5", "act_6"])
        #expect(second.store.cursor == ActivityCursor(committed: 6))
    }

    @Test func failedReadsAreRetried() async throws {
        let directus = FakeDirectus()
        let harness = try ReaderHarness(directus: directus, subscriptions: [subscription()])
        harness.start()
        try await harness.waitUntilCaughtUp()
        directus.failNext(3)
        directus.commit(1, "create", "articles", "1", item: article(1))
        harness.wakeup.changeSeen(collection: "articles")
        let events = try await harness.collect(1)
        await harness.halt()
        #expect(events.map(\.id) == ["act_1"])
        #expect(events.first?.origin == .backfill, "a failed read means catching up")
    }

    @Test func backfillWaitsWhileTheQueueIsFull() async throws {
        let directus = FakeDirectus()
        for id in 1...30 { directus.commit(Int64(id), "create", "articles", "\(id)", item: article(id)) }
        let directory = try ReaderHarness.stateFromTheStart()
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription()],
            directory: directory,
            pageSize: 5,
            capacity: 10
        )
        harness.start()
        try await harness.wait { harness.queue.depth == 10 }
        try await Task.sleep(for: .milliseconds(100))
        #expect(harness.queue.depth == 10, "the reader waits instead of reading on")
        // Two pages queued, one waiting to be put, and at most one more read ahead.
        #expect(directus.state.withLock { $0.activityReads } <= 4)
        let events = try await harness.collect(30)
        await harness.halt()
        #expect(events.map(\.seq) == (1...30).map { Int64($0) })
    }
}
