import BridgeJSON
import BridgeSystem
import BridgeTestSupport
import Testing

@testable import BridgeActivity
@testable import BridgeEvents

/// A `resync` (or a snapshot made due after a loss to retention) snapshots from a fresh watermark, read when it is
/// taken; the sink's reader may stand well below it then (a sink that is slow or down holds it back). The changes in
/// between must still reach the sink as change lines, before the snapshot's first line: a delete in that gap is in
/// no snapshot (the item is gone at the watermark), and the vanished scan looks above the watermark only
/// (contract, "The delivery guarantee, per mode": every change, whatever its origin; per item, in order).
@Suite struct ResyncGapTests {
    /// A reader from the start of the log that has handed over the creates of articles 1–3 (activity ids 1–3).
    private func startAfterThreeCreates(_ directus: FakeDirectus) async throws -> ReaderHarness {
        for id in 1...3 { directus.commit(Int64(id), "create", "articles", "\(id)", item: article(id)) }
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription()],
            directory: try ReaderHarness.stateFromTheStart()
        )
        harness.start()
        #expect(try await harness.collect(3).map(\.id) == ["act_1", "act_2", "act_3"])
        return harness
    }

    /// The stream waits to queue a page (the sink takes nothing); a request is taken at watermark 6 with rows 5 and 6
    /// (an update of 1, the delete of 2) not read yet; then 1 changes again. Per item: its changes up to the
    /// watermark, its snapshot line, its changes after it. Before, rows 5 and 6 gave no line: 2 was never deleted.
    @Test func aResyncTakenWhileTheStreamWaitsStreamsTheChangesUpToItsWatermarkFirst() async throws {
        let directus = FakeDirectus()
        for id in 1...4 { directus.commit(Int64(id), "create", "articles", "\(id)", item: article(id)) }
        directus.commit(5, "update", "articles", "1", item: article(1, title: "in the gap"))
        directus.commit(6, "delete", "articles", "2")
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
        try harness.requestResync("articles")
        try await harness.wait { harness.store.subscriptions["articles"]?.snapshotWatermark == 6 }
        #expect(
            harness.store.subscriptions["articles"]
                == SubscriptionCursorState(startID: 0, snapshotWatermark: 6,
                    collection: "articles", snapshotQuery: "{}"),
            "the stream of articles still starts where it did: \(String(describing: harness.store.subscriptions))"
        )
        directus.commit(7, "update", "articles", "1", item: article(1, title: "after the watermark"))
        harness.wakeup.changeSeen(collection: "articles")

        let events = try await harness.collect(10)
        #expect(
            events.map(\.id)
                == (1...6).map { "act_\($0)" } + [1, 3, 4].map { "snap_articles_\($0)_6" } + ["act_7"],
            "\(events.map(\.id))"
        )
        #expect(events.first { $0.id == "act_6" }?.event == .delete)
        #expect(events.filter { $0.key == "1" }.map(\.id) == ["act_1", "act_5", "snap_articles_1_6", "act_7"])
        try await harness.wait { harness.store.subscriptions["articles"]?.snapshotDone == true }
        #expect(harness.store.subscriptions["articles"]?.snapshotDone == true)
        await harness.halt()
    }

    /// As above, but rows 5 and 6 are committed after the reader read ahead past row 4 (an empty page: nothing was
    /// there yet) and while it waits to queue rows 3–4. That empty page says nothing about the rows up to the
    /// watermark taken later. Before, it counted as "read up to the watermark": the snapshot ran before rows 5 and 6,
    /// and their lines came after it (found by the CI, `ResyncBesideAStuckSinkTests`, 1,000 creates late).
    @Test func aPageReadAheadBeforeTheRequestDoesNotCountAsReadUpToItsWatermark() async throws {
        let directus = FakeDirectus()
        for id in 1...4 { directus.commit(Int64(id), "create", "articles", "\(id)", item: article(id)) }
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription()],
            directory: try ReaderHarness.stateFromTheStart(),
            pageSize: 2,
            capacity: 1
        )
        harness.start()
        // Rows 1–2 are queued, rows 3–4 read and waiting for room, the page after 4 read ahead (empty).
        try await harness.wait { harness.registry.render().contains("directus_bridge_activity_reads_total 2\n") }
        try await harness.wait { directus.state.withLock { $0.activityReads } >= 3 }
        directus.commit(5, "update", "articles", "1", item: article(1, title: "in the gap"))
        directus.commit(6, "delete", "articles", "2")
        try harness.requestResync("articles")
        try await harness.wait { harness.store.subscriptions["articles"]?.snapshotWatermark == 6 }

        let events = try await harness.collect(9)
        #expect(
            events.map(\.id) == (1...6).map { "act_\($0)" } + [1, 3, 4].map { "snap_articles_\($0)_6" },
            "\(events.map(\.id))"
        )
        await harness.halt()
    }

    /// A reader polling every 20 ms that has handed over rows 1, 2 (creates of articles 1 and 2) and 4 (an update of
    /// 1), row 3 not committed.
    private func readPastAGapAt3(
        _ directus: FakeDirectus, gapTimeout: Duration, logger: Logger = .silent
    ) async throws -> ReaderHarness {
        directus.commit(1, "create", "articles", "1", item: article(1))
        directus.commit(2, "create", "articles", "2", item: article(2))
        directus.commit(4, "update", "articles", "1", item: article(1, title: "after the gap"))
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription()],
            directory: try ReaderHarness.stateFromTheStart(),
            gapTimeout: gapTimeout,
            pollInterval: .milliseconds(20),
            logger: logger
        )
        harness.start()
        #expect(try await harness.collect(3).map(\.id) == ["act_1", "act_2", "act_4"])
        return harness
    }

    /// Row 3 (an update of article 2) is still in an open transaction when the request is taken at watermark 4: the
    /// reader has read rows 1, 2 and 4, so its head is at the watermark, but row 3 is a gap below it. The snapshot
    /// waits for the gap; row 3, committed later, comes before it (per item: act_2, act_3, its snapshot line).
    /// Before, the snapshot ran at once and act_3 came after article 2's snapshot line.
    @Test func aSnapshotWaitsForAGapBelowItsWatermark() async throws {
        let log = RecordingLogHandler()
        let directus = FakeDirectus()
        // The gap is never given up on here, however slow the machine.
        let harness = try await readPastAGapAt3(directus, gapTimeout: .seconds(3600), logger: log.logger())
        try harness.requestResync("articles")
        try await harness.wait { harness.store.subscriptions["articles"]?.snapshotWatermark == 4 }
        // The reader polls meanwhile (every 20 ms): the gap is read again, the snapshot still waits.
        let gapReads = directus.state.withLock { $0.gapReads }
        try await harness.wait { directus.state.withLock { $0.gapReads } >= gapReads + 3 }
        #expect(try await harness.next(timeout: .milliseconds(100)) == nil, "nothing before row 3")
        let waits = log.all.filter { $0.message.hasPrefix("snapshot waits for activity rows below its watermark") }
        #expect(waits.map(\.metadata) == [["watermark": "4", "gaps": "1"]], "said once, while it polls")
        directus.commit(3, "update", "articles", "2", item: article(2, title: "in the gap"))

        let events = try await harness.collect(3)
        #expect(
            events.map(\.id) == ["act_3", "snap_articles_1_4", "snap_articles_2_4"],
            "\(events.map(\.id))"
        )
        await harness.halt()
    }

    /// While the snapshot waits for the gap below its watermark, each poll reads the gap alone: the rows above the
    /// watermark (a busy table's) are for after the snapshot, so reading a page of them at every wake-up, only to set
    /// it aside, would cost Directus a read per poll for as long as the gap stays open (up to the gap timeout).
    /// Before, every poll read the page after the head too.
    @Test func aSnapshotWaitingForAGapReadsTheGapAlone() async throws {
        let directus = FakeDirectus()
        let harness = try await readPastAGapAt3(directus, gapTimeout: .seconds(3600))
        try harness.requestResync("articles")
        try await harness.wait { harness.store.subscriptions["articles"]?.snapshotWatermark == 4 }
        directus.commit(5, "update", "articles", "1", item: article(1, title: "above the watermark"))
        let pageReads = directus.state.withLock { $0.activityReads }
        let gapReads = directus.state.withLock { $0.gapReads }
        try await harness.wait { directus.state.withLock { $0.gapReads } >= gapReads + 5 }
        // One page may have been read before the reader saw it stood at the watermark; none after.
        let pagesDuringTheWait = directus.state.withLock { $0.activityReads } - pageReads
        #expect(pagesDuringTheWait <= 1, "\(pagesDuringTheWait) pages above the watermark read while it waited")
        directus.commit(3, "update", "articles", "2", item: article(2, title: "in the gap"))

        let events = try await harness.collect(4)
        #expect(
            events.map(\.id) == ["act_3", "snap_articles_1_4", "snap_articles_2_4", "act_5"],
            "\(events.map(\.id))"
        )
        await harness.halt()
    }

    /// The same gap is never committed (a rolled-back transaction): the reader gives up on it after the gap timeout,
    /// and the snapshot runs then. The wait for a gap is bounded.
    @Test func aSnapshotRunsOnceAGapBelowItsWatermarkIsGivenUp() async throws {
        let harness = try await readPastAGapAt3(FakeDirectus(), gapTimeout: .seconds(1))
        try harness.requestResync("articles")
        let events = try await harness.collect(2, timeout: .seconds(60))
        #expect(events.map(\.id) == ["snap_articles_1_4", "snap_articles_2_4"], "\(events.map(\.id))")
        #expect(harness.registry.render().contains("directus_bridge_activity_gaps_abandoned_total 1"))
        await harness.halt()
    }

    /// Directus fails every read for a while (5xx, a restart) just as a request is taken: the watermark's read, the
    /// reads up to it and the snapshot's pages are retried, and nothing comes out of order or twice: the change below
    /// the watermark, then the snapshot, then the change after it. Then the reads fail again mid-snapshot (pages of
    /// one): the snapshot goes on where it was.
    @Test func aResyncWhileDirectusReadsFailIsTakenAndRunsInOrder() async throws {
        let directus = FakeDirectus()
        for id in 1...3 { directus.commit(Int64(id), "create", "articles", "\(id)", item: article(id)) }
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription()],
            directory: try ReaderHarness.stateFromTheStart(),
            snapshotPageSize: 1
        )
        harness.start()
        #expect(try await harness.collect(3).map(\.id) == ["act_1", "act_2", "act_3"])
        directus.commit(4, "update", "articles", "2", item: article(2, title: "below the watermark"))
        directus.failNext(4)
        try harness.requestResync("articles")
        try await harness.wait { harness.store.subscriptions["articles"]?.snapshotWatermark == 4 }
        let first = try #require(try await harness.next(timeout: .seconds(30)))
        directus.failNext(3)
        directus.commit(5, "delete", "articles", "3")
        harness.wakeup.changeSeen(collection: "articles")
        let rest = try await harness.collect(4, timeout: .seconds(30))
        let events = first.events + rest
        #expect(
            events.map(\.id) == ["act_4"] + [1, 2, 3].map { "snap_articles_\($0)_4" } + ["act_5"],
            "\(events.map(\.id))"
        )
        #expect(!harness.registry.render().contains("directus_bridge_activity_read_failures_total 0\n"))
        try await harness.wait { harness.store.subscriptions["articles"]?.snapshotDone == true }
        await harness.halt()
    }

    /// A `resync` of a stopped bridge: the next start takes the watermark at the newest id, while the sink's saved
    /// cursor is below it (changes made while the bridge was stopped). They are streamed before the snapshot.
    /// Before, the start skipped them: the delete of 2 never came.
    @Test func aResyncOfAStoppedBridgeStreamsTheChangesBetweenTheCursorAndTheWatermarkFirst() async throws {
        let directus = FakeDirectus()
        let first = try await startAfterThreeCreates(directus)
        await first.halt()

        directus.commit(4, "update", "articles", "1", item: article(1, title: "while stopped"))
        directus.commit(5, "delete", "articles", "2")
        try CursorDatabase(directory: first.directory, sinks: ["default"]).requestResync(
            of: "articles",
            sinks: ["default"]
        )
        let second = try ReaderHarness(directus: directus, subscriptions: [subscription()], directory: first.directory)
        second.start()
        let events = try await second.collect(4)
        #expect(
            events.map(\.id) == ["act_4", "act_5", "snap_articles_1_5", "snap_articles_3_5"],
            "\(events.map(\.id))"
        )
        try await second.wait { second.store.subscriptions["articles"]?.snapshotDone == true }
        #expect(
            second.store.subscriptions["articles"]
                == SubscriptionCursorState(startID: 0, snapshotWatermark: 5, snapshotDone: true,
                    collection: "articles", snapshotQuery: "{}")
        )
        await second.halt()
    }

    /// A `resync` taken by a running reader whose sink made nothing durable since (then the bridge is killed): the
    /// next start repeats the changes between the sink's durable cursor and the watermark, then the snapshot. Before,
    /// the saved state started the stream after the watermark: the restart gave the snapshot only.
    @Test func aCrashAfterAResyncRepeatsTheChangesBelowItsWatermarkThatWereNotDurable() async throws {
        let directus = FakeDirectus()
        let first = try await startAfterThreeCreates(directus)
        try await first.waitUntilCaughtUp()
        directus.commit(4, "update", "articles", "1", item: article(1, title: "not durable"))
        directus.commit(5, "delete", "articles", "2")
        first.wakeup.changeSeen(collection: "articles")
        try await first.wait { first.queue.depth == 2 }
        try first.requestResync("articles")
        try await first.wait { first.store.subscriptions["articles"]?.snapshotWatermark == 5 }
        try await first.wait { first.queue.depth == 4 }
        await first.halt()  // nothing taken since act_3: the sink made none of it durable
        #expect(first.store.cursor == ActivityCursor(committed: 3))

        let second = try ReaderHarness(directus: directus, subscriptions: [subscription()], directory: first.directory)
        second.start()
        let events = try await second.collect(4)
        #expect(
            events.map(\.id) == ["act_4", "act_5", "snap_articles_1_5", "snap_articles_3_5"],
            "\(events.map(\.id))"
        )
        await second.halt()
    }

    /// A `resync` of a subscription whose snapshot waits for the sink supersedes it; the items its queued page held
    /// and that are deleted before the new watermark get their delete, before the new snapshot. Before, the new
    /// snapshot (without them) was all that followed.
    @Test func aSupersededSnapshotsItemsDeletedBeforeTheNewWatermarkGetTheirDelete() async throws {
        let directus = FakeDirectus()
        for id in 1...6 { directus.seed("articles", "\(id)", article(id)) }
        directus.commit(1, "update", "articles", "1", item: article(1))
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription(snapshot: true)],
            snapshotPageSize: 2,
            capacity: 1
        )
        harness.start()
        // The first page (1 and 2) is queued; the second waits for room.
        try await harness.wait { harness.queue.depth > 0 }
        directus.commit(2, "delete", "articles", "2")
        try harness.requestResync("articles")
        try await harness.wait { harness.store.subscriptions["articles"]?.snapshotWatermark == 2 }

        let events = try await harness.collect(8)
        #expect(
            events.map(\.id)
                == ["snap_articles_1_1", "snap_articles_2_1", "act_2"]
                + [1, 3, 4, 5, 6].map { "snap_articles_\($0)_2" },
            "\(events.map(\.id))"
        )
        try await harness.wait { harness.store.subscriptions["articles"]?.snapshotDone == true }
        #expect(harness.store.subscriptions["articles"]?.snapshotWatermark == 2)
        #expect(harness.store.subscriptions["articles"]?.snapshotDone == true)
        await harness.halt()
    }

    /// Sibling: a loss to retention found while rows above it are still unread (the sink is slow). What retention
    /// deleted is lost; what is still readable between the reader's position and the new snapshot's watermark — here
    /// the delete of article 2 — is streamed before the snapshot. Before, it was skipped for `articles`.
    @Test func afterALossToRetentionTheReadableChangesBelowTheNewWatermarkAreStreamedFirst() async throws {
        let directus = FakeDirectus()
        for id in 1...3 { directus.seed("articles", "\(id)", article(id)) }
        directus.commit(1, "create", "comments", "1", item: ["id": 1])
        let harness = try ReaderHarness(
            directus: directus,
            subscriptions: [subscription(snapshot: true), subscription("comments")],
            pageSize: 2,
            gapTimeout: .milliseconds(50),
            pollInterval: .milliseconds(20),
            capacity: 1
        )
        harness.start()
        #expect(try await harness.collect(3).map(\.id) == [1, 2, 3].map { "snap_articles_\($0)_1" })
        try await harness.waitUntilCaughtUp()
        // Retention deletes rows 2 and 3 before the reader gets to them; row 10 deletes an article the sink has.
        var rows: [(id: Int64, action: String, collection: String, key: String, item: JSONValue)] = []
        for id in Int64(2)...11 where id != 10 {
            rows.append((id, "create", "comments", "\(id)", ["id": JSONValue(id)]))
        }
        rows.append((10, "delete", "articles", "2", .null))
        directus.commit(rows.sorted { $0.id < $1.id }, thenRetainFrom: 4)
        harness.wakeup.changeSeen(collection: "comments")
        // Rows 4-5 are queued, so the reader reads at most 6-7 before it waits for room (the queue holds one batch).
        // The gap 2-3, first seen with 4-5, is given up on at the read of 6-7 or of 8-9 (the timeout has passed by
        // then): rows 10-11 are not read yet.
        try await harness.wait { harness.queue.depth > 0 }
        try await Task.sleep(for: .milliseconds(300))

        let events = try await harness.collect(10)
        #expect(
            events.map(\.id) == (4...11).map { "act_\($0)" } + ["snap_articles_1_11", "snap_articles_3_11"],
            "\(events.map(\.id))"
        )
        #expect(events.first { $0.id == "act_10" }?.collection == "articles")
        #expect(harness.registry.render().contains("directus_bridge_activity_retention_lost_total 2"))
        await harness.halt()
    }
}
