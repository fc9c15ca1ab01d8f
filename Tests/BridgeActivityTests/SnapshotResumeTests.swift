import BridgeJSON
import BridgeTestSupport
import Testing

@testable import BridgeActivity
@testable import BridgeEvents

/// A snapshot that a stop cut resumes after the last page its sink made durable, at the same watermark: a clean stop
/// repeats no line and loses none (contract, "The delivery guarantee, per mode"; docs/RELIABILITY.md, "Careless or
/// hostile operators"). The harness records a batch's progress as the sink's runner does once the batch is durable.
/// Five articles in pages of two (watermark 9); the first run's two pages are durable when it stops (resume point `4`,
/// 4 lines). Shared with `SnapshotResumeDamageTests`.
func snapshotStoppedAfterTwoPages(_ directus: FakeDirectus) async throws -> ReaderHarness {
    for id in 1...5 { directus.seed("articles", "\(id)", article(id)) }
    directus.commit(9, "create", "comments", "1", item: ["id": 1])
    let first = try ReaderHarness(
        directus: directus, subscriptions: [subscription(snapshot: true)], snapshotPageSize: 2, capacity: 1)
    first.start()
    let pages = [try await first.next(timeout: .seconds(10)), try await first.next(timeout: .seconds(10))]
    await first.halt()
    #expect(pages.map { $0?.events.map(\.id) ?? [] } == [[1, 2], [3, 4]].map { $0.map { "snap_articles_\($0)_9" } })
    let state = first.store.subscriptions["articles"]
    #expect(state?.snapshotPending == true && state?.snapshotAfter == "4" && state?.snapshotLines == 4)
    return first
}

@Suite struct SnapshotResumeTests {
    private func stoppedAfterTwoPages(_ directus: FakeDirectus) async throws -> ReaderHarness {
        try await snapshotStoppedAfterTwoPages(directus)
    }

    private func restart(_ directus: FakeDirectus, in first: ReaderHarness) throws -> ReaderHarness {
        let second = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], directory: first.directory,
            snapshotPageSize: 2)
        second.start()
        return second
    }

    /// Before: the restart ran the snapshot from its first page again, all five lines (two pages repeated).
    @Test func aStoppedSnapshotResumesAfterItsLastDurablePage() async throws {
        let directus = FakeDirectus()
        let first = try await stoppedAfterTwoPages(directus)
        directus.commit(10, "create", "comments", "2", item: ["id": 2])
        let second = try restart(directus, in: first)
        let rest = try await second.collect(1)
        try await second.wait { second.store.subscriptions["articles"]?.snapshotDone == true }
        await second.halt()
        #expect(rest.map(\.id) == ["snap_articles_5_9"], "the same watermark, after the last durable page")
        #expect(second.store.subscriptions["articles"]?.snapshotDone == true)
    }

    /// A page handed over but never made durable (a crash before the sink's runner recorded it) is read again: the
    /// resume point names only what the sink holds.
    @Test func aPageNotRecordedIsReadAgain() async throws {
        let directus = FakeDirectus()
        for id in 1...5 { directus.seed("articles", "\(id)", article(id)) }
        directus.commit(9, "create", "comments", "1", item: ["id": 1])
        let first = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], snapshotPageSize: 2, capacity: 1)
        first.start()
        _ = try #require(try await first.next(timeout: .seconds(10)))
        _ = try #require(try await first.next(accept: false, timeout: .seconds(10)))
        await first.halt()
        #expect(first.store.subscriptions["articles"]?.snapshotAfter == "2")
        let second = try restart(directus, in: first)
        let rest = try await second.collect(3)
        await second.halt()
        #expect(rest.map(\.id) == [3, 4, 5].map { "snap_articles_\($0)_9" })
    }

    /// Items deleted after the watermark, while the bridge was stopped: one below the resume key was held by a page of
    /// the first run (its line is in the sink, with data) and gets no second line; one above it gets its line with
    /// `data` null in the resumed run, before its delete. Before (the rule "not held by a page of this run"): item 1
    /// got a second line, with null data and the same id.
    @Test func anItemDeletedBelowTheResumeKeyGetsNoSecondLineAndOneAboveGetsItsLine() async throws {
        let directus = FakeDirectus()
        let first = try await stoppedAfterTwoPages(directus)
        directus.commit(10, "delete", "articles", "1")
        directus.commit(11, "delete", "articles", "5")
        let second = try restart(directus, in: first)
        let rest = try await second.collect(3)
        try await second.wait { second.store.subscriptions["articles"]?.snapshotDone == true }
        await second.halt()
        #expect(rest.map(\.id) == ["snap_articles_5_9", "act_10", "act_11"])
        #expect(rest.first?.json["data"] == .null)
    }

    /// `resync` of a stopped snapshot with a resume point starts the new snapshot from its first page.
    @Test func aResyncOfAStoppedSnapshotStartsFromTheFirstPage() async throws {
        let directus = FakeDirectus()
        let first = try await stoppedAfterTwoPages(directus)
        try CursorDatabase(directory: first.directory, sinks: ["default"]).requestResync(
            of: "articles", sinks: ["default"])
        // Row 10, next to the cursor's 9: ids 10 and 11 left out would be a gap below the watermark, which holds the
        // snapshot until it fills or the gap timeout gives it up (ResyncGapTests).
        directus.commit(10, "create", "comments", "3", item: ["id": 3])
        let second = try restart(directus, in: first)
        let all = try await second.collect(5)
        try await second.wait { second.store.subscriptions["articles"]?.snapshotDone == true }
        await second.halt()
        #expect(all.map(\.id) == (1...5).map { "snap_articles_\($0)_10" })
    }

    /// The sibling checked: a backfill cut by a stop goes on after the last batch its sink made durable (each batch
    /// carries its progress), repeating nothing.
    @Test func aStoppedBackfillGoesOnAfterItsLastDurableBatch() async throws {
        let directus = FakeDirectus()
        let directory = try ReaderHarness.stateFromTheStart()
        for id in 1...5 { directus.commit(Int64(id), "create", "articles", "\(id)", item: article(id)) }
        let first = try ReaderHarness(
            directus: directus, subscriptions: [subscription()], directory: directory, pageSize: 2, capacity: 1)
        first.start()
        let taken = [try await first.next(timeout: .seconds(10)), try await first.next(timeout: .seconds(10))]
        await first.halt()
        #expect(taken.flatMap { $0?.events.map(\.id) ?? [] } == ["act_1", "act_2", "act_3", "act_4"])
        let second = try ReaderHarness(
            directus: directus, subscriptions: [subscription()], directory: directory, pageSize: 2)
        second.start()
        let rest = try await second.collect(1)
        await second.halt()
        #expect(rest.map(\.id) == ["act_5"])
    }

    /// An item deleted after the watermark but before the stopped run read its page, with a key below the resume key,
    /// gets its `data: null` line with the first page read after its delete that reaches its key — so the resume point
    /// covers it — and no second one after the restart. Before: the line was due only with the last page, which the
    /// stopped run never read, and the resumed run counted the key as held by the earlier pages: item 3 got no
    /// snapshot line at all, only its delete.
    @Test func anItemDeletedBeforeItsPageInTheStoppedRunGetsItsLineBeforeTheResumePoint() async throws {
        let directus = FakeDirectus()
        for id in 1...6 { directus.seed("articles", "\(id)", article(id)) }
        directus.commit(9, "create", "comments", "1", item: ["id": 1])
        directus.state.withLock { $0.beforePage[2] = [(id: 10, action: "delete", collection: "articles", key: "3")] }
        let first = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], snapshotPageSize: 2, capacity: 1)
        first.start()
        let pages = [try await first.next(timeout: .seconds(10)), try await first.next(timeout: .seconds(10))]
        await first.halt()
        let ids = pages.map { $0?.events.map(\.id) ?? [] }
        #expect(ids == [["snap_articles_1_9", "snap_articles_2_9"], ["snap_articles_4_9", "snap_articles_5_9", "snap_articles_3_9"]])
        #expect(pages.last??.events.last?.json["data"] == .null)
        #expect(first.store.subscriptions["articles"]?.snapshotAfter == "5")

        let second = try restart(directus, in: first)
        let rest = try await second.collect(2)
        try await second.wait { second.store.subscriptions["articles"]?.snapshotDone == true }
        await second.halt()
        #expect(rest.map(\.id) == ["snap_articles_6_9", "act_10"])
    }
}

/// What an operator reads about items deleted before their snapshot page: one line per snapshot with the total, not
/// one per page (a scale run: 160 such lines for six snapshots of a busy table).
@Suite struct SnapshotVanishedLogTests {
    @Test func itemsDeletedBeforeTheirPagesAreSaidOnceWithTheTotal() async throws {
        let log = RecordingLogHandler()
        let directus = FakeDirectus()
        for id in 1...8 { directus.seed("articles", "\(id)", article(id)) }
        directus.commit(9, "create", "comments", "1", item: ["id": 1])
        directus.state.withLock {
            $0.beforePage[2] = [(id: 10, action: "delete", collection: "articles", key: "3")]
            $0.beforePage[3] = [(id: 11, action: "delete", collection: "articles", key: "6")]
        }
        let harness = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], snapshotPageSize: 2,
            logger: log.logger())
        harness.start()
        let events = try await harness.collect(10)
        try await harness.wait { harness.store.subscriptions["articles"]?.snapshotDone == true }
        try await harness.wait { log.contains("snapshot done") }
        await harness.halt()
        #expect(events.filter { $0.id.hasPrefix("snap_") && $0.json["data"] == .null }.count == 2, "\(events.map(\.id))")
        let said = log.all.filter { $0.message.hasPrefix("snapshot items deleted before their page was read") }
        #expect(said.map { $0.metadata["count"] } == ["2"], "\(said.map(\.metadata))")
    }
}
