import BridgeJSON
import BridgeStore
import BridgeSystem
import BridgeTestSupport
import Testing

@testable import BridgeActivity
@testable import BridgeCore
@testable import BridgeDirectus
@testable import BridgeEvents
@testable import BridgeSinks

/// Activity log retention (docs/ARCHITECTURE.md): rows the cursor still needs that Directus deleted are reported (error
/// log with the id range, metric), `snapshot: true` subscriptions snapshot again, the others go on from the oldest row.
@Suite struct RetentionTests {
    static let subscriptions = [subscription(snapshot: true), subscription("comments")]
    static let lostMessage =
        "activity rows were lost to retention: Directus deleted rows the cursor still needed before they were read; "
        + "their changes cannot be delivered"

    @Test func rowsDeletedWhileTheBridgeWasStoppedAreReportedAndSnapshotSubscriptionsSnapshotAgain() async throws {
        let directus = FakeDirectus()
        for id in 1...3 { directus.seed("articles", "\(id)", article(id)) }
        let first = try ReaderHarness(directus: directus, subscriptions: Self.subscriptions)
        first.start()
        #expect(try await first.collect(3).map(\.key) == ["1", "2", "3"], "the first start's snapshot")
        await first.halt()

        // While the bridge is stopped: six changes, then retention deletes the first four rows.
        directus.commit(1, "create", "articles", "10", item: article(10))
        directus.commit(2, "create", "comments", "20", item: ["id": 20])
        directus.commit(3, "update", "articles", "1", item: article(1, title: "changed"))
        directus.commit(4, "create", "comments", "21", item: ["id": 21])
        directus.commit(5, "create", "articles", "11", item: article(11))
        directus.commit(6, "create", "comments", "22", item: ["id": 22])
        directus.retain(from: 5)

        let logs = RecordingLogHandler()
        let second = try ReaderHarness(
            directus: directus,
            subscriptions: Self.subscriptions,
            directory: first.directory,
            gapTimeout: .milliseconds(50),
            pollInterval: .milliseconds(20),
            logger: logs.logger()
        )
        second.start()
        let events = try await second.collect(7)
        await second.halt()
        // The rows still there at once; once the missing ids are given up on, every article's current state as a
        // snapshot (watermark 6).
        #expect(events.filter { $0.event != .snapshot }.map(\.id) == ["act_5", "act_6"])
        let snapshot = events.filter { $0.event == .snapshot }
        #expect(snapshot.map(\.key) == ["1", "2", "3", "10", "11"])
        #expect(snapshot.first?.json["data"]?["title"] == "changed")
        #expect(
            second.store.subscriptions["articles"]
                == SubscriptionCursorState(startID: 0, snapshotWatermark: 6, snapshotDone: true,
                    collection: "articles", snapshotQuery: "{}"),
            "the start of the first run stays: only the snapshot is new"
        )
        #expect(second.store.cursor == ActivityCursor(committed: 6))

        let lost = try #require(logs.all.first { $0.message == Self.lostMessage })
        #expect(lost.level == .error)
        #expect(lost.metadata["activity.lost_from"] == "1" && lost.metadata["activity.lost_to"] == "4")
        #expect(lost.metadata["resnapshot"] == "articles")
        #expect(second.registry.render().contains("directus_bridge_activity_retention_lost_total 4"))
        #expect(second.registry.render().contains("directus_bridge_activity_gaps_abandoned_total 0"))
    }

    @Test func aLateCommitOnAnEmptyLogIsDeliveredNotTakenForALoss() async throws {
        // A fresh log: the first transaction takes id 1 and commits after id 2. Id 1 is below the oldest row then,
        // but it is a gap like any other and arrives.
        let directus = FakeDirectus()
        let logs = RecordingLogHandler()
        let harness = try ReaderHarness(directus: directus, subscriptions: [subscription()], logger: logs.logger())
        harness.start()
        try await harness.waitUntilCaughtUp()
        directus.commit(2, "create", "articles", "2", item: article(2))
        harness.wakeup.changeSeen(collection: "articles")
        #expect(try await harness.collect(1).map(\.id) == ["act_2"])
        directus.commit(1, "create", "articles", "1", item: article(1))
        harness.wakeup.changeSeen(collection: "articles")
        #expect(try await harness.collect(1).map(\.id) == ["act_1"])
        await harness.halt()
        #expect(!logs.contains(Self.lostMessage))
        #expect(harness.store.cursor == ActivityCursor(committed: 2))
    }

    @Test func sparseIdsAndRolledBackTransactionsAreNotLosses() async throws {
        let directus = FakeDirectus()
        directus.commit(1, "create", "tags", "a", item: ["slug": "a"])  // the oldest row: another collection
        let logs = RecordingLogHandler()
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription()],
            gapTimeout: .milliseconds(50),
            pollInterval: .milliseconds(20),
            logger: logs.logger()
        )
        harness.start()
        try await harness.waitUntilCaughtUp()
        // Ids of the subscribed collection are sparse, and id 3 never commits.
        directus.commit(2, "create", "tags", "b", item: ["slug": "b"])
        directus.commit(4, "create", "articles", "4", item: article(4))
        harness.wakeup.changeSeen(collection: "articles")
        #expect(try await harness.collect(1).map(\.id) == ["act_4"])
        let deadline = ContinuousClock.now + .seconds(10)
        while harness.store.cursor?.committed != 4 && ContinuousClock.now < deadline {
            _ = try await harness.next(timeout: .milliseconds(50))
        }
        await harness.halt()
        #expect(harness.store.cursor == ActivityCursor(committed: 4))
        #expect(!logs.contains(Self.lostMessage))
        #expect(logs.contains("activity ids never appeared; treating them as rolled back"))
        #expect(harness.registry.render().contains("directus_bridge_activity_retention_lost_total 0"))
    }

    @Test func aRunningReaderThatFellBehindRetentionRecoversTheSameWay() async throws {
        let directus = FakeDirectus()
        directus.seed("articles", "1", article(1))
        directus.commit(1, "create", "comments", "1", item: ["id": 1])
        let logs = RecordingLogHandler()
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: Self.subscriptions,
            gapTimeout: .milliseconds(50),
            pollInterval: .milliseconds(20),
            logger: logs.logger()
        )
        harness.start()
        #expect(try await harness.collect(1).map(\.key) == ["1"], "the first start's snapshot")
        try await harness.waitUntilCaughtUp()
        // Rows 2 and 3 are deleted before the reader gets to them (it waited on its sinks, say).
        directus.commit(
            [
                (2, "create", "comments", "2", ["id": 2]), (3, "create", "articles", "3", article(3)),
                (4, "create", "comments", "4", ["id": 4]),
            ],
            thenRetainFrom: 4
        )
        harness.wakeup.changeSeen(collection: "comments")
        let events = try await harness.collect(3)
        await harness.halt()
        #expect(events.filter { $0.event != .snapshot }.map(\.id) == ["act_4"])
        #expect(events.filter { $0.event == .snapshot }.map(\.key) == ["1", "3"])
        let lost = try #require(logs.all.first { $0.message == Self.lostMessage })
        #expect(lost.metadata["activity.lost_from"] == "2" && lost.metadata["activity.lost_to"] == "3")
        #expect(harness.registry.render().contains("directus_bridge_activity_retention_lost_total 2"))
        #expect(harness.store.cursor == ActivityCursor(committed: 4))
    }

    @Test func checkReadsTheSavedCursorWithoutChangingTheFile() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor-read").path
        #expect(
            try CursorDatabase.readCursors(directory: directory).isEmpty,
            "no file: nothing to say, nothing created"
        )
        #expect(try CursorDatabase.readCursors(directory: directory + "/missing").isEmpty)
        do {
            let store = try CursorStore(directory: directory)
            try store.startIfNew(at: 10)
            try store.record(ActivityProgress(resolvedIDs: [12, 13]))
        }
        let cursor = try #require(try CursorDatabase.readCursors(directory: directory)["default"])
        #expect(cursor == ActivityCursor(committed: 10, resolvedAbove: [12...13]))
        #expect(cursor.unresolved(below: 20) == [11...11, 14...19])
    }
}
