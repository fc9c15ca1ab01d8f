import BridgeJSON
import BridgeStore
import BridgeTestSupport
import Testing

@testable import BridgeActivity
@testable import BridgeEvents

/// A snapshot's resume point read back from state that is damaged or was written by hand (docs/RELIABILITY.md,
/// "Files another user controls"): the snapshot starts from its first page — lines the sink holds come again, none is
/// lost — and the start says why; it never traps, never retries a read that cannot succeed, and never skips items.
@Suite struct SnapshotResumeDamageTests {
    /// Writes the resume point into `cursor.db` by hand, as damage or an operator's edit would.
    private func damage(_ directory: String, after: String, lines: Int64) throws {
        let database = try SQLiteDatabase(path: directory + "/cursor.db")
        _ = try database.run(
            "UPDATE sink_subscription_state SET snapshot_after = ?, snapshot_lines = ? WHERE uid = 'articles'",
            [.text(after), .integer(lines)])
        try database.close()
    }

    /// The restart over the damaged state: every article's line once more, the snapshot done, and a warning naming the
    /// subscription. Before: `null` and a key beyond every integer (`1e300`, 10^23) ended the snapshot at once
    /// without item 5 (SQL compares `_gt: null` true for no row, and no integer key is above them), as did a text key
    /// for the integer keys and one of 10 MB (every number sorts before text); an object or an array was refused by
    /// Directus on every read, retried forever; `Int64.max` lines trapped as the count went on; a key that is not JSON
    /// started over without a word; a negative count was resumed and shown.
    @Test(arguments: [
        ("not JSON", "{4", Int64(4)),
        ("null", "null", 4),
        ("an object", #"{"_gte":0}"#, 4),
        ("an array", "[4]", 4),
        ("a boolean", "true", 4),
        ("a fraction", "4.5", 4),
        ("a number beyond any key", "1e300", 4),
        ("an integer beyond Int64", "99999999999999999999999", 4),
        ("text for integer keys", #""b-500""#, 4),
        ("a 10 MB key", "\"" + String(repeating: "k", count: 10 << 20) + "\"", 4),
        ("a negative line count", "4", -1),
        ("the largest line count", "4", Int64.max),
    ])
    func aDamagedResumePointStartsTheSnapshotFromItsFirstPage(_ what: String, after: String, lines: Int64)
        async throws
    {
        let directus = FakeDirectus()
        let first = try await snapshotStoppedAfterTwoPages(directus)
        try damage(first.directory, after: after, lines: lines)
        let logs = RecordingLogHandler()
        let second = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], directory: first.directory,
            snapshotPageSize: 2, logger: logs.logger())
        second.start()
        let lines = try await second.collect(5)
        try await second.wait { second.store.subscriptions["articles"]?.snapshotDone == true }
        await second.halt()
        #expect(lines.map(\.id) == (1...5).map { "snap_articles_\($0)_9" }, "\(what)")
        #expect(second.store.subscriptions["articles"]?.snapshotDone == true, "\(what)")
        let warning = logs.all.first { $0.level == .warning && $0.message.contains("resume point") }
        #expect(warning?.metadata["directus.subscription.uid"] == "articles", "\(what): \(logs.all.map(\.message))")
        #expect(!logs.contains("snapshot resumed after the last page its sink holds"), "\(what)")
    }

    /// A snapshot of `collection` under the uid `articles` (pages of two), stopped once its first two pages were
    /// taken: its resume point is a key of `collection`. The state is then made one of `cursor.db` version 6, which
    /// did not name the state's collection: a state that does is begun afresh when the uid moves
    /// (`SubscriptionMovedTests`), so only the resume point's own check is left to catch the move here.
    private func snapshotUnderTheUIDArticlesStopped(_ directus: FakeDirectus, collection: String) async throws
        -> ReaderHarness
    {
        let first = try ReaderHarness(
            directus: directus, subscriptions: [subscription(collection, uid: "articles", snapshot: true)],
            snapshotPageSize: 2, capacity: 1)
        first.start()
        _ = try await first.next(timeout: .seconds(10))
        _ = try await first.next(timeout: .seconds(10))
        await first.halt()
        let database = try SQLiteDatabase(path: first.directory + "/cursor.db")
        _ = try database.run("UPDATE sink_subscription_state SET collection = NULL WHERE uid = 'articles'")
        try database.close()
        return first
    }

    /// The uid `articles`, now reading `articles`, started again on `directory`'s state until its five lines and the
    /// snapshot's completion.
    private func articlesSnapshottedAgain(_ directus: FakeDirectus, directory: String) async throws
        -> (lines: [EncodedEvent], logs: RecordingLogHandler)
    {
        let logs = RecordingLogHandler()
        let second = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], directory: directory,
            snapshotPageSize: 2, logger: logs.logger())
        second.start()
        let lines = try await second.collect(5)
        try await second.wait { second.store.subscriptions["articles"]?.snapshotDone == true }
        await second.halt()
        return (lines, logs)
    }

    /// A subscription's `uid` moved from a collection with text keys to one with integer keys while its snapshot was
    /// cut (the state is the uid's): the text resume key matches no integer key. Before: the snapshot of `articles`
    /// ended at once with none of its five items, and said "snapshot done".
    @Test func aResumeKeyOfTheOtherKindThanTheCollectionsKeysStartsFromTheFirstPage() async throws {
        let directus = FakeDirectus()
        for key in ["a", "b", "c", "d", "e"] { directus.seed("tags", key, ["id": .string(key)]) }
        for id in 1...5 { directus.seed("articles", "\(id)", article(id)) }
        directus.commit(9, "create", "comments", "1", item: ["id": 1])
        let first = try await snapshotUnderTheUIDArticlesStopped(directus, collection: "tags")
        #expect(first.store.subscriptions["articles"]?.snapshotAfter == #""d""#)

        let (lines, logs) = try await articlesSnapshottedAgain(directus, directory: first.directory)
        #expect(lines.map(\.id) == (1...5).map { "snap_articles_\($0)_9" })
        #expect(logs.all.contains { $0.level == .warning && $0.message.contains("resume point") })
    }

    /// A subscription's `uid` moved to another collection with keys of the same kind while its snapshot was cut (the
    /// state is the uid's): the resume key is one of the other collection's. Before: the snapshot of `articles`
    /// resumed after `comments`' key 4 and sent item 5 alone — items 1 to 4 skipped, "snapshot done".
    @Test func aResumeKeyRecordedForAnotherCollectionStartsFromTheFirstPage() async throws {
        let directus = FakeDirectus()
        for id in 1...5 { directus.seed("comments", "\(id)", ["id": JSONValue(Int64(id))]) }
        for id in 1...5 { directus.seed("articles", "\(id)", article(id)) }
        directus.commit(9, "create", "comments", "1", item: ["id": 1])
        let first = try await snapshotUnderTheUIDArticlesStopped(directus, collection: "comments")
        #expect(first.store.subscriptions["articles"]?.snapshotAfter == "4")

        let (lines, logs) = try await articlesSnapshottedAgain(directus, directory: first.directory)
        #expect(lines.map(\.id) == (1...5).map { "snap_articles_\($0)_9" })
        let warning = logs.all.first { $0.level == .warning && $0.message.contains("resume point") }
        #expect(warning?.metadata["reason"]?.description.contains("comments") == true, "\(logs.all.map(\.message))")
    }

    /// What is checked, for `cursor.db`'s text and the shared bucket's value alike (the bucket keeps the key as JSON:
    /// whatever stands there comes back as its JSON text).
    @Test func theResumePointIsCheckedBeforeItIsUsed() throws {
        #expect(SnapshotResumePoint(after: nil, lines: 0) == .none)
        #expect(SnapshotResumePoint(after: "500", lines: 500) == .after(JSONValue(Int64(500)), lines: 500))
        #expect(SnapshotResumePoint(after: #""é-1""#, lines: 0) == .after("é-1", lines: 0))
        let longest = "\"" + String(repeating: "k", count: SnapshotResumePoint.maximumKeyBytes - 2) + "\""
        guard case .after = SnapshotResumePoint(after: longest, lines: SnapshotResumePoint.maximumLines) else {
            Issue.record("the longest key and the largest count taken")
            return
        }
        for (after, lines) in [
            ("\"" + longest + "\"", Int64(1)), ("", 0), ("{", 0), ("null", 0), ("false", 0), ("{}", 0), ("[]", 0),
            ("-0.5", 0), ("1e3", 0), ("9223372036854775808", 0), ("1", -1), ("1", SnapshotResumePoint.maximumLines + 1),
            ("1", Int64.min),
        ] {
            guard case .damaged = SnapshotResumePoint(after: after, lines: lines) else {
                Issue.record("taken: \(after.prefix(20)) \(lines)")
                continue
            }
        }
        // The bucket's value, as `SharedCursorBackend` reads it back (of the collection the subscription reads).
        let stem = #"{"start_id":40,"snapshot_watermark":40,"snapshot_done":false,"snapshot_collection":"articles","#
        for value in [
            stem + #""snapshot_after":{"id":4},"snapshot_lines":4}"#,
            stem + #""snapshot_after":true,"snapshot_lines":4}"#,
            stem + #""snapshot_after":4,"snapshot_lines":-4}"#,
            stem + #""snapshot_after":4,"snapshot_lines":9223372036854775807}"#,
        ] {
            let state = try #require(SharedCursorBackend.subscription(from: Array(value.utf8)))
            guard case .damaged = state.resumePoint(of: "articles") else {
                Issue.record("taken: \(value)")
                continue
            }
        }
        let huge = stem + #""snapshot_after":""# + String(repeating: "k", count: 10 << 20) + #"","snapshot_lines":4}"#
        let state = try #require(SharedCursorBackend.subscription(from: Array(huge.utf8)))
        let reason = "a key of 10485762 bytes, more than a request can carry (4096)"
        #expect(state.resumePoint(of: "articles") == .damaged(reason))
    }
}
