import BridgeStore
import BridgeSystem
import BridgeTestSupport
import Synchronization
import Testing

@testable import BridgeActivity
@testable import BridgeCore
@testable import BridgeDirectus
@testable import BridgeEvents
@testable import BridgeSinks

@Suite struct CursorStoreTests {
    @Test func aReopenedStoreRestoresExactlyWhatWasRecorded() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path + "/nested/state"
        do {
            let store = try CursorStore(directory: directory)
            #expect(store.cursor == nil)
            #expect(try store.startIfNew(at: 100) == ActivityCursor(committed: 100))
            #expect(try store.startIfNew(at: 500) == ActivityCursor(committed: 100), "an existing cursor stays")
            try store.record(ActivityProgress(resolvedIDs: [101, 103, 104, 107]))
            try store.record(ActivityProgress(resolvedIDs: [], abandoned: [105...105]))
            try store.save(SubscriptionCursorState(startID: 100), for: "articles")
            try store.save(SubscriptionCursorState(startID: 104, snapshotWatermark: 104), for: "tags")
            try store.record(ActivityProgress(completedSnapshots: ["tags": 104]))
        }
        let reopened = try CursorStore(directory: directory)
        #expect(reopened.cursor == ActivityCursor(committed: 101, resolvedAbove: [103...105, 107...107]))
        #expect(reopened.cursor?.gaps == [102...102, 106...106])
        #expect(
            reopened.subscriptions == [
                "articles": SubscriptionCursorState(startID: 100),
                "tags": SubscriptionCursorState(startID: 104, snapshotWatermark: 104, snapshotDone: true),
            ]
        )
        try reopened.record(ActivityProgress(resolvedIDs: [102, 106]))
        let again = try CursorStore(directory: directory)
        #expect(again.cursor == ActivityCursor(committed: 107))
    }

    /// `directus-bridge resync` writes beside a running bridge: the bridge's own writes (a snapshot finishing, in its
    /// own connection) must not undo the request, every configured sink gets it, and only the start that acts on it
    /// clears it (for its own sink).
    @Test func aResyncRequestSurvivesTheRunningBridgesWritesUntilAStartClearsIt() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        let sinks = ["0-ndjson-a", "1-webhook-b"]
        let running = try CursorDatabase(directory: directory, sinks: sinks).store(for: "0-ndjson-a")
        try running.save(SubscriptionCursorState(startID: 10, snapshotWatermark: 10), for: "articles")
        let command = try CursorDatabase(directory: directory, sinks: sinks)
        try command.requestResync(of: "articles", sinks: sinks)
        try command.requestResync(of: "never-started", sinks: sinks)
        try running.record(ActivityProgress(resolvedIDs: [11], completedSnapshots: ["articles": 10]))
        try running.save(
            SubscriptionCursorState(startID: 10, snapshotWatermark: 10, snapshotDone: true),
            for: "articles"
        )
        let next = try CursorDatabase(directory: directory, sinks: sinks)
        let first = try next.store(for: "0-ndjson-a")
        #expect(
            first.subscriptions["articles"]
                == SubscriptionCursorState(
                    startID: 10,
                    snapshotWatermark: 10,
                    snapshotDone: true,
                    resyncRequested: true
                )
        )
        #expect(try next.store(for: "1-webhook-b").subscriptions["articles"]?.resyncRequested == true)
        #expect(first.subscriptions["never-started"]?.resyncRequested == true)
        try first.save(
            SubscriptionCursorState(startID: 20, snapshotWatermark: 20),
            for: "articles",
            clearingResync: true
        )
        let states = try CursorDatabase.readSubscriptionStates(directory: directory)
        #expect(states["0-ndjson-a"]?["articles"]?.resyncRequested == false)
        #expect(states["1-webhook-b"]?["articles"]?.resyncRequested == true, "the other sink's start clears its own")
    }

    /// A `resync` taken while a snapshot waits for its sink supersedes it with its last page still queued: that
    /// page's completion, recorded later, finishes nothing — neither with a newer watermark nor with the same one (no
    /// change since) — while the new snapshot's own completion does, and a completion recorded before is kept.
    @Test func theQueuedCompletionOfASupersededSnapshotFinishesNothing() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        let store = try CursorStore(directory: directory)
        let pending = { (watermark: Int64) in SubscriptionCursorState(startID: watermark, snapshotWatermark: watermark)
        }
        try store.save(pending(40), for: "articles")
        try store.save(pending(50), for: "articles", clearingResync: true, superseding: 40)
        try store.record(ActivityProgress(completedSnapshots: ["articles": 40]))
        #expect(store.subscriptions["articles"] == pending(50))

        try store.save(pending(50), for: "articles", clearingResync: true, superseding: 50)
        try store.record(ActivityProgress(completedSnapshots: ["articles": 50]))
        #expect(store.subscriptions["articles"] == pending(50), "the superseded snapshot's completion")
        try store.record(ActivityProgress(completedSnapshots: ["articles": 50]))
        let done = SubscriptionCursorState(startID: 50, snapshotWatermark: 50, snapshotDone: true)
        #expect(store.subscriptions["articles"] == done, "the new snapshot's completion")
        #expect(try CursorStore(directory: directory).subscriptions["articles"] == done)

        // Recorded before the resync was taken: there is no completion left to pass over.
        try store.save(pending(50), for: "articles", clearingResync: true, superseding: 50)
        try store.record(ActivityProgress(completedSnapshots: ["articles": 50]))
        #expect(store.subscriptions["articles"] == done)
    }

    /// A record that fails (a full disk) is retried by the sink's runner: the superseded snapshot's completion is still
    /// passed over by the retry, and only the new snapshot's own completion marks it done.
    @Test func aFailedRecordKeepsTheSupersededCompletionPassedOver() throws {
        let backend = RecordFailingOnce()
        let store = CursorStore(backend: backend, sink: "sink", cursor: nil, subscriptions: [:])
        let pending = SubscriptionCursorState(startID: 50, snapshotWatermark: 50)
        try store.save(pending, for: "articles")
        try store.save(pending, for: "articles", clearingResync: true, superseding: 50)
        backend.failNext()
        #expect(throws: RecordFailingOnce.Failure.self) {
            try store.record(ActivityProgress(completedSnapshots: ["articles": 50]))
        }
        try store.record(ActivityProgress(completedSnapshots: ["articles": 50]))
        #expect(store.subscriptions["articles"] == pending, "the retried record of the superseded completion")
        try store.record(ActivityProgress(completedSnapshots: ["articles": 50]))
        #expect(store.subscriptions["articles"]?.snapshotDone == true, "the new snapshot's completion")
    }

    /// "Snapshot done" waits for the sink: `waitUntilSnapshotDone` returns once the runner recorded the snapshot's
    /// last page (not for another watermark), and gives up on shutdown or cancellation without spinning.
    @Test func aSnapshotIsDoneOnlyOnceItsCompletionIsRecorded() async throws {
        let store = try CursorStore(directory: TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path)
        try store.save(SubscriptionCursorState(startID: 40, snapshotWatermark: 40), for: "articles")
        let stop = ShutdownSignal()
        let waiting = Task { await store.waitUntilSnapshotDone("articles", watermark: 40, stop: stop) }
        try await Task.sleep(for: .milliseconds(50))
        try store.record(ActivityProgress(resolvedIDs: [41]))
        try store.record(ActivityProgress(completedSnapshots: ["articles": 40]))
        #expect(await waiting.value)
        #expect(await store.waitUntilSnapshotDone("articles", watermark: 40, stop: stop), "already done")

        let stopped = Task { await store.waitUntilSnapshotDone("articles", watermark: 90, stop: stop) }
        stop.trigger()
        #expect(await stopped.value == false)
        let cancelled = Task { await store.waitUntilSnapshotDone("articles", watermark: 90, stop: ShutdownSignal()) }
        cancelled.cancel()
        #expect(await cancelled.value == false)
    }

    @Test func recordingBeforeAStartCreatesTheCursor() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        let store = try CursorStore(directory: directory)
        try store.record(ActivityProgress(resolvedIDs: [2]))
        #expect(try CursorStore(directory: directory).cursor == ActivityCursor(committed: 0, resolvedAbove: [2...2]))
    }

    @Test func eachSinkHasItsOwnCursor() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        do {
            let database = try CursorDatabase(directory: directory, sinks: ["ndjson", "webhook"])
            let ndjson = try database.store(for: "ndjson")
            let webhook = try database.store(for: "webhook")
            try ndjson.startIfNew(at: 10)
            try webhook.startIfNew(at: 10)
            try ndjson.record(ActivityProgress(resolvedIDs: [11, 12, 13]))
            try ndjson.save(SubscriptionCursorState(startID: 10), for: "posts")
            try webhook.record(ActivityProgress(resolvedIDs: [11]))
        }
        let database = try CursorDatabase(directory: directory, sinks: ["ndjson", "webhook"])
        #expect(try database.store(for: "ndjson").cursor == ActivityCursor(committed: 13))
        #expect(try database.store(for: "webhook").cursor == ActivityCursor(committed: 11))
        #expect(try database.store(for: "ndjson").subscriptions == ["posts": SubscriptionCursorState(startID: 10)])
        #expect(try database.store(for: "webhook").subscriptions.isEmpty)
        #expect(
            try CursorDatabase.readCursors(directory: directory)
                == ["ndjson": ActivityCursor(committed: 13), "webhook": ActivityCursor(committed: 11)]
        )
    }

    @Test func aNewSinkStartsFromTheSinkFurthestBehindAndARemovedSinkIsForgotten() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        do {
            let database = try CursorDatabase(directory: directory, sinks: ["ahead", "behind"])
            try database.store(for: "ahead").record(ActivityProgress(resolvedIDs: Array(1...20)))
            let behind = try database.store(for: "behind")
            try behind.record(ActivityProgress(resolvedIDs: [1, 2, 3, 5]))
            try behind.save(SubscriptionCursorState(startID: 0, snapshotWatermark: 3, snapshotDone: true), for: "s")
        }
        let database = try CursorDatabase(directory: directory, sinks: ["ahead", "new"])
        let new = try database.store(for: "new")
        #expect(new.cursor == ActivityCursor(committed: 3, resolvedAbove: [5...5]))
        #expect(
            new.subscriptions == ["s": SubscriptionCursorState(startID: 0, snapshotWatermark: 3, snapshotDone: true)]
        )
        #expect(Set(try CursorDatabase.readCursors(directory: directory).keys) == ["ahead", "new"])
    }

    /// A name added to a sink that had none (docs/configuration.md, "Sink names"): the name takes its positional
    /// id's own progress — not the furthest behind — and keeps it when the entries are reordered later.
    @Test func aNamedSinkKeepsTheProgressOfItsPositionalId() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        do {
            let database = try CursorDatabase(directory: directory, sinks: ["0-ndjson-a", "1-webhook-b"])
            try database.store(for: "0-ndjson-a").record(ActivityProgress(resolvedIDs: [1, 2, 3, 5]))
            let webhook = try database.store(for: "1-webhook-b")
            try webhook.record(ActivityProgress(resolvedIDs: Array(1...20) + [22]))
            try webhook.save(SubscriptionCursorState(startID: 0, snapshotWatermark: 3, snapshotDone: true), for: "s")
        }
        let renames = SinkRenames(
            formerIDs: ["file": "0-ndjson-a", "hook": "1-webhook-b"],
            configured: ["hook", "file"]
        )
        let database = try CursorDatabase(directory: directory, sinks: ["hook", "file"], renames: renames)
        let hook = try database.store(for: "hook")
        #expect(hook.cursor == ActivityCursor(committed: 20, resolvedAbove: [22...22]))
        #expect(
            hook.subscriptions == ["s": SubscriptionCursorState(startID: 0, snapshotWatermark: 3, snapshotDone: true)]
        )
        #expect(try database.store(for: "file").cursor == ActivityCursor(committed: 3, resolvedAbove: [5...5]))
        #expect(Set(try CursorDatabase.readCursors(directory: directory).keys) == ["hook", "file"])
        // Reordered at the next start (the positional ids change with the positions): nothing moves.
        let moved = SinkRenames(
            formerIDs: ["hook": "0-webhook-b", "file": "1-ndjson-a"],
            configured: ["hook", "file"]
        )
        let again = try CursorDatabase(directory: directory, sinks: ["hook", "file"], renames: moved)
        #expect(try again.store(for: "hook").cursor == ActivityCursor(committed: 20, resolvedAbove: [22...22]))
        #expect(try again.store(for: "file").cursor == ActivityCursor(committed: 3, resolvedAbove: [5...5]))
    }

    /// A state directory of version 0.1 (one cursor, schema version 2): every configured sink goes on from it, and
    /// nothing is lost or replayed.
    @Test func theSingleCursorOfAnOlderVersionIsHandedToEverySink() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor").path
        do {
            let old = try SQLiteDatabase(path: directory + "/" + CursorDatabase.fileName)
            try old.execute(
                """
                CREATE TABLE cursor (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), committed INTEGER NOT NULL);
                CREATE TABLE subscription_state (
                    uid TEXT PRIMARY KEY, start_id INTEGER NOT NULL, snapshot_watermark INTEGER,
                    snapshot_done INTEGER NOT NULL DEFAULT 0);
                CREATE TABLE resolved_range (low INTEGER PRIMARY KEY, high INTEGER NOT NULL);
                INSERT INTO cursor VALUES (1, 42);
                INSERT INTO resolved_range VALUES (44, 45);
                INSERT INTO subscription_state VALUES ('posts', 7, 9, 1);
                PRAGMA user_version = 2;
                """
            )
        }
        #expect(
            try CursorDatabase.readCursors(directory: directory) == [
                "": ActivityCursor(committed: 42, resolvedAbove: [44...45])
            ]
        )
        let database = try CursorDatabase(directory: directory, sinks: ["ndjson", "webhook"])
        for sink in ["ndjson", "webhook"] {
            let store = try database.store(for: sink)
            #expect(store.cursor == ActivityCursor(committed: 42, resolvedAbove: [44...45]))
            #expect(
                store.subscriptions == [
                    "posts": SubscriptionCursorState(startID: 7, snapshotWatermark: 9, snapshotDone: true)
                ]
            )
        }
        #expect(Set(try CursorDatabase.readCursors(directory: directory).keys) == ["ndjson", "webhook"])
    }
}

/// A cursor backend in memory whose next `record` fails when asked to (`failNext`).
private final class RecordFailingOnce: CursorBackend, @unchecked Sendable {
    struct Failure: Error {}
    private let failing = Mutex(false)

    func failNext() { failing.withLock { $0 = true } }

    func load(sink: String) throws -> CursorDatabase.Loaded { CursorDatabase.Loaded(cursor: nil, subscriptions: [:]) }
    func writeCursor(sink: String, committed: Int64) throws {}
    func write(_ subscription: SubscriptionCursorState, uid: String, sink: String, clearingResync: Bool) throws {}
    func record(
        sink: String,
        cursor: ActivityCursor?,
        previous: ActivityCursor,
        subscriptions: [(uid: String, state: SubscriptionCursorState)]
    ) throws {
        let fail = failing.withLock { failing in
            defer { failing = false }
            return failing
        }
        if fail { throw Failure() }
    }
}
