import BridgeJSON
import BridgeStore
import BridgeTestSupport
import Testing

@testable import BridgeActivity
@testable import BridgeEvents

/// The activity ids a subscription's saved state holds (`start_id`, `snapshot_watermark`), written into `cursor.db` by
/// hand as damage or an edit would, after a run that stopped with two of five snapshot pages durable
/// (docs/RELIABILITY.md, "Files another user controls"): the start neither traps nor loses the snapshot, and a start
/// above every id in the log is said.
@Suite struct SavedStateDamageTests {
    private func stoppedThenDamaged(_ directus: FakeDirectus, _ column: String, _ value: Int64) async throws -> String {
        for id in 1...5 { directus.seed("articles", "\(id)", article(id)) }
        directus.commit(9, "create", "comments", "1", item: ["id": 1])
        let first = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], snapshotPageSize: 2, capacity: 1)
        first.start()
        _ = try await first.next(timeout: .seconds(10))
        _ = try await first.next(timeout: .seconds(10))
        await first.halt()
        let database = try SQLiteDatabase(path: first.directory + "/cursor.db")
        _ = try database.run(
            "UPDATE sink_subscription_state SET \(column) = ? WHERE uid = 'articles'", [.integer(value)])
        try database.close()
        return first.directory
    }

    /// Held before this change too: the snapshot goes on (its lines carry the saved watermark in their ids) and the
    /// change after it arrives.
    @Test(arguments: [
        ("snapshot_watermark", Int64.max), ("snapshot_watermark", Int64.min), ("snapshot_watermark", -1),
        ("start_id", Int64.min), ("start_id", -1),
    ])
    func idsOutOfRangeNeitherTrapNorLoseTheSnapshot(_ column: String, value: Int64) async throws {
        let directus = FakeDirectus()
        let directory = try await stoppedThenDamaged(directus, column, value)
        let second = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], directory: directory,
            snapshotPageSize: 2)
        second.start()
        let rest = try await second.collect(1)
        try await second.wait { second.store.subscriptions["articles"]?.snapshotDone == true }
        directus.commit(10, "update", "articles", "2", item: article(2, title: "later"))
        second.wakeup.changeSeen(collection: "articles")
        let later = try await second.collect(1)
        await second.halt()
        #expect(rest.map(\.key) == ["5"] && later.map(\.id) == ["act_10"], "\(column) \(value)")
    }

    /// A start above the newest activity id cannot have been saved (a subscription starts at the newest id of its
    /// first run): its changes wait until the log's ids pass it, as a cursor above the log's end does, and the start
    /// says so. Before: nothing was logged, and the change after the snapshot never came.
    @Test func aStartAboveTheNewestActivityIDIsWarnedAbout() async throws {
        let directus = FakeDirectus()
        let directory = try await stoppedThenDamaged(directus, "start_id", Int64.max)
        let logs = RecordingLogHandler()
        let second = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], directory: directory,
            snapshotPageSize: 2, logger: logs.logger())
        second.start()
        _ = try await second.collect(1)
        await second.halt()
        let warning = logs.all.first { $0.level == .warning && $0.message.contains("above the newest activity id") }
        #expect(warning?.metadata["directus.subscription.uid"] == "articles", "\(logs.all.map(\.message))")
        #expect(warning?.metadata["starts_after"] == "9223372036854775807")
    }
}
