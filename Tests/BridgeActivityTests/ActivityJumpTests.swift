import BridgeStore
import BridgeTestSupport
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// Issue 10, defect 3: an activity id that jumps by 10^12 (a reseeded sequence, sparse ids) costs memory and time
/// independent of the size of the jump — in the reader, its gap checks and the cursor store.
@Suite struct ActivityJumpTests {
    static let jump: Int64 = 1_000_000_000_000

    /// A running reader that has read ids 1 and 10^12.
    static func readAJump(gapTimeout: Duration, pollInterval: Duration) async throws -> (FakeDirectus, ReaderHarness) {
        let directus = FakeDirectus()
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription()],
            gapTimeout: gapTimeout,
            pollInterval: pollInterval
        )
        harness.start()
        try await harness.waitUntilCaughtUp()
        directus.commit(1, "create", "articles", "1", item: article(1))
        directus.commit(jump, "create", "articles", "2", item: article(2))
        harness.wakeup.changeSeen(collection: "articles")
        #expect(try await harness.collect(2).map(\.seq) == [1, jump])
        return (directus, harness)
    }

    @Test func aLateRowInsideAJumpIsDelivered() async throws {
        let (directus, harness) = try await Self.readAJump(gapTimeout: .seconds(60), pollInterval: .seconds(60))
        #expect(harness.store.cursor == ActivityCursor(committed: 1, resolvedAbove: [Self.jump...Self.jump]))

        // A transaction that began before the reseed commits late: its row inside the jump still arrives.
        directus.commit(2, "create", "articles", "3", item: article(3))
        harness.wakeup.changeSeen(collection: "articles")
        #expect(try await harness.collect(1).map(\.seq) == [2])
        await harness.halt()
        #expect(harness.store.cursor == ActivityCursor(committed: 2, resolvedAbove: [Self.jump...Self.jump]))
        #expect(directus.state.withLock { $0.gapReads } >= 1)
    }

    @Test func aJumpIsReadPastAsOneRangeOnceItsGapTimesOut() async throws {
        let (_, harness) = try await Self.readAJump(gapTimeout: .milliseconds(50), pollInterval: .milliseconds(20))
        let deadline = ContinuousClock.now + .seconds(10)
        while harness.store.cursor?.committed != Self.jump && ContinuousClock.now < deadline {
            #expect(try await harness.next(timeout: .milliseconds(100))?.events.isEmpty ?? true)
        }
        await harness.halt()
        #expect(harness.store.cursor == ActivityCursor(committed: Self.jump))
        let metrics = harness.registry.render()
        #expect(metrics.contains("directus_bridge_activity_id_jumps_total 1"))
        #expect(metrics.contains("directus_bridge_activity_gaps_abandoned_total 0"))
    }

    @Test func theCursorStoreKeepsAJumpInOneRow() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor-jump").path
        do {
            let store = try CursorStore(directory: directory)
            try store.startIfNew(at: 100)
            try store.record(ActivityProgress(resolvedIDs: [101, Self.jump, Self.jump + 2]))
        }
        let database = try SQLiteDatabase(path: directory + "/" + CursorDatabase.fileName)
        #expect(try Self.ranges(in: database) == ["\(Self.jump)-\(Self.jump)", "\(Self.jump + 2)-\(Self.jump + 2)"])
        let store = try CursorStore(directory: directory)
        #expect(store.cursor?.gaps == [102...(Self.jump - 1), (Self.jump + 1)...(Self.jump + 1)])
        try store.record(ActivityProgress(abandoned: store.cursor?.gaps ?? []))
        #expect(try database.query("SELECT count(*) FROM sink_resolved_range") { $0.int64(at: 0) } == [0])
        #expect(try CursorStore(directory: directory).cursor == ActivityCursor(committed: Self.jump + 2))
    }

    /// The rows of `sink_resolved_range` as `low-high` (one sink).
    static func ranges(in database: SQLiteDatabase) throws -> [String] {
        try database.query("SELECT low, high FROM sink_resolved_range ORDER BY low") { row in
            "\(row.int64(at: 0))-\(row.int64(at: 1))"
        }
    }

    @Test func aStoreOfTheFirstSchemaIsMigratedToRanges() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor-v1").path
        do {
            // The version 1 layout: one row per resolved id above the committed mark.
            let database = try SQLiteDatabase(path: directory + "/" + CursorDatabase.fileName)
            try database.execute(
                """
                CREATE TABLE cursor (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), committed INTEGER NOT NULL);
                CREATE TABLE resolved (id INTEGER PRIMARY KEY);
                CREATE TABLE subscription_state (
                    uid TEXT PRIMARY KEY, start_id INTEGER NOT NULL, snapshot_watermark INTEGER,
                    snapshot_done INTEGER NOT NULL DEFAULT 0);
                INSERT INTO cursor VALUES (1, 10);
                INSERT INTO resolved VALUES (12), (13), (14), (20);
                PRAGMA user_version = 1;
                """
            )
        }
        let store = try CursorStore(directory: directory)
        #expect(store.cursor == ActivityCursor(committed: 10, resolvedAbove: [12...14, 20...20]))
        let database = try SQLiteDatabase(path: directory + "/" + CursorDatabase.fileName)
        #expect(try Self.ranges(in: database) == ["12-14", "20-20"])
        try store.record(ActivityProgress(resolvedIDs: [11]))
        #expect(try CursorStore(directory: directory).cursor == ActivityCursor(committed: 14, resolvedAbove: [20...20]))
    }
}
