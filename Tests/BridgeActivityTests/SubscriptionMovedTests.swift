import BridgeJSON
import BridgeStore
import BridgeTestSupport
import Testing

@testable import BridgeActivity
@testable import BridgeEvents

/// A subscription changed in bridge.yaml between two runs (docs/RELIABILITY.md, "A subscription moved to another
/// collection"). A `uid` pointed at another collection: its saved state is the old collection's, so the next start
/// begins it as a new subscription — with its snapshot — and says so, instead of carrying on as if the new collection
/// had been snapshotted. A query changed since the snapshot: each start says so until a `resync` takes a new one.
@Suite struct SubscriptionMovedTests {
    /// Directus with three comments, five articles and activity up to id 9.
    private func directus() -> FakeDirectus {
        let directus = FakeDirectus()
        for id in 1...3 { directus.seed("comments", "\(id)", ["id": JSONValue(Int64(id))]) }
        for id in 1...5 { directus.seed("articles", "\(id)", article(id)) }
        directus.commit(9, "create", "comments", "1", item: ["id": 1])
        return directus
    }

    /// The uid `articles` reading `collection` (`count` items), run until its snapshot is done; returns its state
    /// directory.
    private func snapshotUnderTheUIDArticles(_ directus: FakeDirectus, collection: String, count: Int) async throws
        -> String
    {
        let first = try ReaderHarness(
            directus: directus, subscriptions: [subscription(collection, uid: "articles", snapshot: true)])
        first.start()
        let lines = try await first.collect(count)
        try await first.wait { first.store.subscriptions["articles"]?.snapshotDone == true }
        await first.halt()
        #expect(lines.map(\.id) == (1...count).map { "snap_\(collection)_\($0)_9" })
        #expect(first.store.subscriptions["articles"]?.collection == collection)
        return first.directory
    }

    /// Starts `harness`, updates article 2 once it caught up, and returns what it sent until that update came.
    private static func linesAfterAnUpdate(_ harness: ReaderHarness, _ directus: FakeDirectus) async throws
        -> [EncodedEvent]
    {
        harness.start()
        try await harness.waitUntilCaughtUp()
        directus.commit(10, "update", "articles", "2", item: article(2, title: "new"))
        harness.wakeup.changeSeen(collection: "articles")
        let lines = try await harness.collect(1)
        await harness.halt()
        return lines
    }

    /// The uid `articles` reading `comments`, run until its snapshot is done.
    private func commentsSnapshottedUnderTheUIDArticles(_ directus: FakeDirectus) async throws -> String {
        try await snapshotUnderTheUIDArticles(directus, collection: "comments", count: 3)
    }

    /// Before: the restart on `articles` sent nothing — the state said the snapshot was done, so none of the five
    /// articles reached the sink, and no line said why.
    @Test func aSubscriptionMovedAfterItsSnapshotIsSnapshottedAgainAsANewOne() async throws {
        let directus = directus()
        let directory = try await commentsSnapshottedUnderTheUIDArticles(directus)

        let logs = RecordingLogHandler()
        let second = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], directory: directory,
            logger: logs.logger())
        second.start()
        let lines = try await second.collect(5)
        try await second.wait { second.store.subscriptions["articles"]?.snapshotDone == true }
        await second.halt()
        #expect(lines.map(\.id) == (1...5).map { "snap_articles_\($0)_9" })
        let state = second.store.subscriptions["articles"]
        #expect(state?.collection == "articles")
        #expect(state?.snapshotDone == true)
        let warning = logs.all.first { $0.level == .warning && $0.message.contains("another collection") }
        #expect(warning?.metadata["directus.subscription.uid"] == "articles", "\(logs.all.map(\.message))")
        #expect(warning?.metadata["saved_collection"] == "comments")
    }

    /// Moved to a collection without a snapshot: no snapshot, but the changes from the newest id on, and none of
    /// the old collection's start.
    @Test func aSubscriptionMovedWithoutASnapshotStartsAtTheNewestActivityID() async throws {
        let directus = directus()
        let directory = try await commentsSnapshottedUnderTheUIDArticles(directus)

        let second = try ReaderHarness(
            directus: directus, subscriptions: [subscription()], directory: directory)
        let lines = try await Self.linesAfterAnUpdate(second, directus)
        #expect(lines.map(\.event) == [.update])
        #expect(lines.map(\.key) == ["2"])
        let state = second.store.subscriptions["articles"]
        #expect(state?.collection == "articles")
        #expect(state?.startID == 9)
        #expect(state?.snapshotWatermark == nil)
    }

    /// A `resync` asked for while the uid was moved still stands: the new collection is snapshotted from a fresh
    /// watermark, once, and the request is taken.
    @Test func aResyncAskedForAcrossTheMoveSnapshotsTheNewCollectionOnce() async throws {
        let directus = directus()
        let directory = try await commentsSnapshottedUnderTheUIDArticles(directus)
        try CursorDatabase(directory: directory, sinks: ["default"]).requestResync(of: "articles", sinks: ["default"])

        let second = try ReaderHarness(
            directus: directus, subscriptions: [subscription()], directory: directory)
        second.start()
        let lines = try await second.collect(5)
        try await second.wait { second.store.subscriptions["articles"]?.snapshotDone == true }
        await second.halt()
        #expect(lines.map(\.id) == (1...5).map { "snap_articles_\($0)_9" })
        #expect(second.store.subscriptions["articles"]?.resyncRequested == false)
        #expect(try second.store.recordedResyncRequests().isEmpty)
    }

    /// A state saved before states named their collection (`cursor.db` version 6) is taken to be the configured
    /// collection's — its snapshot is not run again — and the start records the collection, so that a later move is
    /// seen.
    @Test func aStateWithoutItsCollectionIsTakenAsTheConfiguredOnesAndRecordsIt() async throws {
        let directus = directus()
        let directory = try await snapshotUnderTheUIDArticles(directus, collection: "articles", count: 5)
        let database = try SQLiteDatabase(path: directory + "/cursor.db")
        _ = try database.run("UPDATE sink_subscription_state SET collection = NULL WHERE uid = 'articles'")
        try database.close()
        #expect(try CursorStore(directory: directory).subscriptions["articles"]?.collection == nil)

        let logs = RecordingLogHandler()
        let second = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], directory: directory,
            logger: logs.logger())
        let lines = try await Self.linesAfterAnUpdate(second, directus)
        #expect(lines.map(\.key) == ["2"])
        #expect(!lines.contains { $0.origin == .snapshot }, "no snapshot line: \(lines.map(\.id))")
        #expect(!logs.all.contains { $0.message.contains("another collection") })
        #expect(try CursorStore(directory: directory).subscriptions["articles"]?.collection == "articles")
    }

    /// The query's text as the state keeps it: the configured fields, not the primary key the reader adds.
    @Test func theQuerysFingerprintIsTheConfiguredQuery() {
        #expect(subscription().query.fingerprint == "{}")
        #expect(subscription(fields: ["title"]).query.fingerprint == #"{"fields":["title"]}"#)
        #expect(subscription(fields: ["id", "title"]).query.fingerprint == #"{"fields":["id","title"]}"#)
        #expect(subscription(fields: ["title"]).query.fingerprint != subscription(fields: ["status"]).query.fingerprint)
    }

    /// Before: a query changed after the snapshot went unsaid — the sink held the old query's items (and fields)
    /// and nothing pointed at `resync`.
    @Test func aQueryChangedSinceTheSnapshotIsSaidAtEachStartUntilAResyncTakesANewOne() async throws {
        let directus = directus()
        let directory = try await snapshotUnderTheUIDArticles(directus, collection: "articles", count: 5)
        let warning = "the subscription's query is not the one its snapshot was taken with"

        func started(_ subscription: ActivitySubscription, lines: Int) async throws -> (
            lines: [EncodedEvent], logs: RecordingLogHandler
        ) {
            let logs = RecordingLogHandler()
            let harness = try ReaderHarness(
                directus: directus, subscriptions: [subscription], directory: directory, logger: logs.logger())
            harness.start()
            try await harness.waitUntilCaughtUp()
            let taken = try await harness.collect(lines)
            await harness.halt()
            return (taken, logs)
        }
        let same = try await started(subscription(snapshot: true), lines: 0)
        #expect(!same.logs.all.contains { $0.message.contains(warning) })

        let narrowed = subscription(fields: ["title"], snapshot: true)
        for _ in 0..<2 {
            let changed = try await started(narrowed, lines: 0)
            #expect(changed.lines.isEmpty, "no snapshot again by itself: \(changed.lines.map(\.id))")
            let said = changed.logs.all.first { $0.level == .warning && $0.message.contains(warning) }
            #expect(said?.metadata["directus.subscription.uid"] == "articles", "\(changed.logs.all.map(\.message))")
        }

        try CursorDatabase(directory: directory, sinks: ["default"]).requestResync(of: "articles", sinks: ["default"])
        let resynced = try await started(narrowed, lines: 5)
        #expect(resynced.lines.filter { $0.origin == .snapshot }.count == 5)
        #expect(!resynced.logs.all.contains { $0.message.contains(warning) })
        let after = try await started(narrowed, lines: 0)
        #expect(!after.logs.all.contains { $0.message.contains(warning) })
    }
}
