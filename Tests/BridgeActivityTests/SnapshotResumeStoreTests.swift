import BridgeJSON
import BridgeStore
import BridgeTestSupport
import Testing

@testable import BridgeActivity
@testable import BridgeEvents

/// Where a snapshot that a stop cut resumes (docs/RELIABILITY.md, "Careless or hostile operators"): the cursor store
/// keeps, per sink and subscription, the last key of the last page the sink made durable, in `cursor.db` and in the
/// shared bucket, and only for the snapshot that is the subscription's now.
@Suite struct SnapshotResumeStoreTests {
    private static func pending(_ watermark: Int64) -> SubscriptionCursorState {
        SubscriptionCursorState(startID: watermark, snapshotWatermark: watermark)
    }

    private static func position(_ after: String, lines: Int64, run: UInt64, watermark: Int64 = 40)
        -> ActivityProgress
    {
        ActivityProgress(
            snapshotPositions: ["articles": SnapshotPosition(watermark: watermark, after: after, lines: lines, run: run, collection: "articles")]
        )
    }

    /// Each durable page moves the resume point; a reopened file has it; the completion clears it.
    @Test func aRecordedPageIsWhereTheSnapshotResumesUntilItIsDone() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        let store = try CursorStore(directory: directory)
        try store.save(Self.pending(40), for: "articles")
        let run = store.snapshotRun("articles")
        try store.record(Self.position("500", lines: 500, run: run))
        try store.record(Self.position("1000", lines: 1000, run: run))
        var resumed = Self.pending(40)
        resumed.snapshotAfter = "1000"
        resumed.snapshotLines = 1000
        resumed.snapshotCollection = "articles"
        #expect(store.subscriptions["articles"] == resumed)
        #expect(try CursorStore(directory: directory).subscriptions["articles"] == resumed)
        #expect(try CursorDatabase.readSubscriptionStates(directory: directory)["default"]?["articles"] == resumed)

        try store.record(ActivityProgress(completedSnapshots: ["articles": 40]))
        let done = try CursorStore(directory: directory).subscriptions["articles"]
        #expect(done?.snapshotDone == true && done?.snapshotAfter == nil, "\(String(describing: done))")
    }

    /// A page still queued from a snapshot that a `resync` replaced records nothing — even at the same watermark (no
    /// change since), where only the start of the snapshot tells them apart — nor one of another watermark, nor one
    /// after the snapshot is done.
    @Test func aPageOfAReplacedSnapshotRecordsNothing() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        let store = try CursorStore(directory: directory)
        try store.save(Self.pending(40), for: "articles")
        let replaced = store.snapshotRun("articles")
        try store.save(Self.pending(40), for: "articles", clearingResync: true)
        try store.record(Self.position("500", lines: 500, run: replaced))
        #expect(store.subscriptions["articles"] == Self.pending(40))
        let current = store.snapshotRun("articles")
        try store.record(Self.position("500", lines: 500, run: current, watermark: 39))
        #expect(store.subscriptions["articles"] == Self.pending(40))
        try store.record(ActivityProgress(completedSnapshots: ["articles": 40]))
        try store.record(Self.position("500", lines: 500, run: current))
        #expect(store.subscriptions["articles"]?.snapshotAfter == nil)
        #expect(try CursorStore(directory: directory).subscriptions["articles"]?.snapshotAfter == nil)
    }

    /// A `resync` (the start that takes it saves a fresh state) starts the snapshot from its first page.
    @Test func aResyncForgetsTheResumePoint() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        let store = try CursorStore(directory: directory)
        try store.save(Self.pending(40), for: "articles")
        try store.record(Self.position("500", lines: 500, run: store.snapshotRun("articles")))
        let command = try CursorDatabase(directory: directory, sinks: ["default"])
        try command.requestResync(of: "articles", sinks: ["default"])
        let requested = try CursorStore(directory: directory).subscriptions["articles"]
        #expect(requested?.resyncRequested == true && requested?.snapshotAfter == "500", "kept until taken")
        try store.save(Self.pending(60), for: "articles", clearingResync: true)
        #expect(try CursorStore(directory: directory).subscriptions["articles"] == Self.pending(60))
    }

    /// A sink new to the file takes the subscription states of the sink furthest behind, but not a resume point:
    /// none of that sink's pages is in the new one. A name added to a sink keeps its own.
    @Test func aNewSinkStartsAPendingSnapshotFromItsFirstPage() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        do {
            let database = try CursorDatabase(directory: directory, sinks: ["0-ndjson"])
            let store = try database.store(for: "0-ndjson")
            try store.startIfNew(at: 40)
            try store.save(Self.pending(40), for: "articles")
            try store.record(Self.position("500", lines: 500, run: store.snapshotRun("articles")))
        }
        let database = try CursorDatabase(directory: directory, sinks: ["0-ndjson", "1-webhook"])
        #expect(try database.store(for: "1-webhook").subscriptions["articles"] == Self.pending(40))
        #expect(try database.store(for: "0-ndjson").subscriptions["articles"]?.snapshotAfter == "500")
    }

    /// The shared bucket keeps the resume key as the key itself (a number or a string), with its collection; a value
    /// an older bridge wrote has none, or a key without its collection, which is not used.
    @Test func theSharedStateKeepsTheResumeKey() throws {
        for after in ["1000", "\"7f3c2a9e-0000-4000-8000-000000000001\"", nil] {
            var state = Self.pending(40)
            state.snapshotAfter = after
            state.snapshotLines = after == nil ? 0 : 1000
            state.snapshotCollection = after == nil ? nil : "articles"
            state.collection = after == nil ? nil : "articles"
            state.snapshotQuery = after == nil ? nil : #"{"fields":["title"]}"#
            let bytes = SharedCursorBackend.value(of: state)
            #expect(SharedCursorBackend.subscription(from: bytes) == state, "\(String(decoding: bytes, as: UTF8.self))")
        }
        let older = Array(#"{"start_id":40,"snapshot_watermark":40,"snapshot_done":false}"#.utf8)
        #expect(SharedCursorBackend.subscription(from: older) == Self.pending(40))
        // A value with a resume key and no collection (written before the collection was kept): not used.
        let value = #"{"start_id":40,"snapshot_watermark":40,"snapshot_done":false,"snapshot_after":4,"#
        let noCollection = Array((value + #""snapshot_lines":4}"#).utf8)
        let state = try #require(SharedCursorBackend.subscription(from: noCollection))
        guard case .damaged = state.resumePoint(of: "articles") else {
            Issue.record("a shared resume point without its collection is used")
            return
        }
    }

    /// A damaged or hand-written `collection` or `snapshot_query` in the shared value: not a string is not known
    /// (nil), and any string — empty, or a mebibyte — is kept as it is, to be compared at the next start (another
    /// collection starts the subscription afresh: a repeat, never a loss). Nothing traps.
    @Test func aHostileCollectionOrQueryInTheSharedValueIsReadSafely() throws {
        let big = String(repeating: "c", count: 1 << 20)
        let base = #"{"start_id":40,"snapshot_watermark":40,"snapshot_done":true,"#
        for (member, expected) in [("42", nil), ("null", nil), ("[1]", nil), (#""""#, ""), ("\"\(big)\"", big)] {
            let value = Array((base + #""collection":\#(member),"snapshot_query":\#(member)}"#).utf8)
            let state = try #require(SharedCursorBackend.subscription(from: value), "\(member.prefix(20))")
            #expect(state.collection == expected && state.snapshotQuery == expected, "\(member.prefix(20))")
        }
    }

    /// A file of schema version 4 (a pending snapshot, no resume point) opens with none, and keeps its states.
    @Test func aFileOfTheVersionBeforeOpensWithoutAResumePoint() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        do {
            let database = try SQLiteDatabase(path: directory + "/cursor.db", options: .init(synchronous: .full))
            try database.execute(
                """
                CREATE TABLE sink_cursor (sink TEXT PRIMARY KEY, committed INTEGER NOT NULL);
                CREATE TABLE sink_resolved_range (
                    sink TEXT NOT NULL, low INTEGER NOT NULL, high INTEGER NOT NULL, PRIMARY KEY (sink, low));
                CREATE TABLE sink_subscription_state (
                    sink TEXT NOT NULL, uid TEXT NOT NULL, start_id INTEGER NOT NULL, snapshot_watermark INTEGER,
                    snapshot_done INTEGER NOT NULL DEFAULT 0, resync_requested INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (sink, uid));
                INSERT INTO sink_cursor VALUES ('default', 40);
                INSERT INTO sink_subscription_state VALUES ('default', 'articles', 40, 40, 0, 0);
                PRAGMA user_version = 4;
                """
            )
        }
        #expect(try CursorDatabase.readSubscriptionStates(directory: directory)["default"]?["articles"] == Self.pending(40))
        let store = try CursorStore(directory: directory)
        #expect(store.subscriptions["articles"] == Self.pending(40))
        try store.record(Self.position("500", lines: 500, run: store.snapshotRun("articles")))
        #expect(try CursorStore(directory: directory).subscriptions["articles"]?.snapshotAfter == "500")
    }

    /// A file of schema version 5 (a resume point without its collection) opens with the point kept but not used — it
    /// may be a key of another collection, so the pending snapshot starts from its first page — and the next recorded
    /// page stores the collection the store's reader reads with it (version 6).
    @Test func aResumePointOfVersion5IsNotUsedAndTheNextPageRecordsItsCollection() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        do {
            let database = try SQLiteDatabase(path: directory + "/cursor.db", options: .init(synchronous: .full))
            try database.execute(
                """
                CREATE TABLE sink_cursor (sink TEXT PRIMARY KEY, committed INTEGER NOT NULL);
                CREATE TABLE sink_resolved_range (
                    sink TEXT NOT NULL, low INTEGER NOT NULL, high INTEGER NOT NULL, PRIMARY KEY (sink, low));
                CREATE TABLE sink_subscription_state (
                    sink TEXT NOT NULL, uid TEXT NOT NULL, start_id INTEGER NOT NULL, snapshot_watermark INTEGER,
                    snapshot_done INTEGER NOT NULL DEFAULT 0, resync_requested INTEGER NOT NULL DEFAULT 0,
                    snapshot_after TEXT, snapshot_lines INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (sink, uid));
                INSERT INTO sink_cursor VALUES ('default', 40);
                INSERT INTO sink_subscription_state VALUES ('default', 'articles', 40, 40, 0, 0, '500', 500);
                PRAGMA user_version = 5;
                """
            )
        }
        var older = Self.pending(40)
        older.snapshotAfter = "500"
        older.snapshotLines = 500
        // `status` reads a file `run` has not migrated yet.
        #expect(try CursorDatabase.readSubscriptionStates(directory: directory)["default"]?["articles"] == older)
        let store = try CursorStore(directory: directory)
        #expect(store.subscriptions["articles"] == older)
        guard case .damaged(let reason) = older.resumePoint(of: "articles") else {
            Issue.record("a point without its collection is used")
            return
        }
        #expect(reason.contains("without its collection"))

        try store.record(Self.position("1000", lines: 1000, run: store.snapshotRun("articles")))
        let recorded = try #require(try CursorStore(directory: directory).subscriptions["articles"])
        #expect(recorded.snapshotCollection == "articles")
        #expect(recorded.resumePoint(of: "articles") == .after(JSONValue(Int64(1000)), lines: 1000))
        let moved = "the resume point was recorded for collection articles, the subscription now reads comments"
        #expect(recorded.resumePoint(of: "comments") == .damaged(moved))
        #expect(try CursorDatabase.readSubscriptionStates(directory: directory)["default"]?["articles"] == recorded)
        // Adopted by a new sink: no point, no collection.
        #expect(recorded.adopted == Self.pending(40))
        try store.record(ActivityProgress(completedSnapshots: ["articles": 40]))
        #expect(try CursorStore(directory: directory).subscriptions["articles"]?.snapshotCollection == nil)
    }

    /// The order a resumed snapshot judges deleted keys by: numbers as numbers, text byte for byte.
    @Test func keysCompareInTheOrderOfTheSnapshotsPages() throws {
        let number = JSONValue(Int64(1000))
        #expect(SnapshotKeyOrder.key("999", isAtOrBefore: number))
        #expect(SnapshotKeyOrder.key("1000", isAtOrBefore: number))
        #expect(!SnapshotKeyOrder.key("1001", isAtOrBefore: number))
        #expect(!SnapshotKeyOrder.key("10000", isAtOrBefore: number), "not as text")
        #expect(!SnapshotKeyOrder.key("abc", isAtOrBefore: number))
        let text = JSONValue.string("b-2")
        #expect(SnapshotKeyOrder.key("a-9", isAtOrBefore: text))
        #expect(SnapshotKeyOrder.key("b-10", isAtOrBefore: text), "as text")
        #expect(SnapshotKeyOrder.key("b-2", isAtOrBefore: text))
        #expect(!SnapshotKeyOrder.key("b-3", isAtOrBefore: text))
        #expect(!SnapshotKeyOrder.key("b", isAtOrBefore: .null))
    }
}
