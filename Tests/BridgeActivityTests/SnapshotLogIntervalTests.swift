import BridgeJSON
import BridgeTestSupport
import Testing

@testable import BridgeActivity
@testable import BridgeEvents

/// A snapshot reads the activity log after a page at most once per `snapshotLogInterval` (the bridge's second), and
/// only such a page carries a resume position; a clean stop reads the log once more and hands the position of the
/// last page handed (docs/RELIABILITY.md, "Careless or hostile operators" and "Snapshots of a table that changes").
/// Here the interval is a minute, so no page but the last reads the log on its own. Pages of two, watermark 9.
@Suite struct SnapshotLogIntervalTests {
    private func started(_ directus: FakeDirectus, items: Int, capacity: Int = 1) throws -> ReaderHarness {
        for id in 1...items { directus.seed("articles", "\(id)", article(id)) }
        directus.commit(9, "create", "comments", "1", item: ["id": 1])
        let harness = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], snapshotPageSize: 2,
            snapshotLogInterval: .seconds(60), capacity: capacity)
        harness.start()
        return harness
    }

    private func restart(_ directus: FakeDirectus, in first: ReaderHarness) throws -> ReaderHarness {
        let second = try ReaderHarness(
            directus: directus, subscriptions: [subscription(snapshot: true)], directory: first.directory,
            snapshotPageSize: 2, snapshotLogInterval: .seconds(60))
        second.start()
        return second
    }

    /// Waits until the reader has read the fourth page (the stop then comes while it waits to queue it).
    private func readFourPages(_ directus: FakeDirectus, _ harness: ReaderHarness) async throws {
        try await harness.wait { directus.state.withLock { $0.pageReads } >= 4 }
        try #require(directus.state.withLock { $0.pageReads } == 4)
    }

    /// Before: every page but the last carried its position, the log read after each (a request or two per page).
    @Test func pagesBetweenTwoLogReadsCarryNoPosition() async throws {
        let directus = FakeDirectus()
        let harness = try started(directus, items: 7, capacity: 100)
        var batches: [EventBatch] = []
        for _ in 0..<4 { batches.append(try #require(try await harness.next(timeout: .seconds(10)))) }
        await harness.halt()
        let pages = [[1, 2], [3, 4], [5, 6], [7]].map { $0.map { "snap_articles_\($0)_9" } }
        #expect(batches.map { $0.events.map(\.id) } == pages)
        #expect(batches.prefix(3).allSatisfy { $0.progress == nil }, "\(batches.map(\.progress))")
        #expect(batches.last?.progress?.completedSnapshots == ["articles": 9])
    }

    /// Stopped cleanly while pages without a position were handed: the last page handed (key 8) is recorded, so the
    /// restart repeats no line. With the log read only once a second and nothing at the stop, no position at all was
    /// recorded and the restart sent all eleven items again.
    @Test func aCleanStopRecordsTheLastPageHanded() async throws {
        let directus = FakeDirectus()
        let first = try started(directus, items: 11)
        var lines: [String] = []
        for _ in 0..<2 { lines += try #require(try await first.next(timeout: .seconds(10))).events.map(\.id) }
        // The queue holds one page: the reader has queued the third and, once it read the fourth, waits to queue it.
        try await readFourPages(directus, first)
        lines += try await first.stopCleanly().flatMap { $0.events.map(\.id) }
        let state = first.store.subscriptions["articles"]
        #expect(state?.snapshotPending == true && state?.snapshotAfter == "8" && state?.snapshotLines == 8)

        let second = try restart(directus, in: first)
        lines += try await second.collect(3).map(\.id)
        try await second.wait { second.store.subscriptions["articles"]?.snapshotDone == true }
        await second.halt()
        #expect(lines == (1...11).map { "snap_articles_\($0)_9" })
    }

    /// An item deleted before its page was read (3, with page 2) gets its `data: null` line from the stop's read of the
    /// log, in the batch that carries the position past its key, and no second one after the restart. A position
    /// handed at the stop without that read would leave item 3 without a snapshot line for good: the restart counts
    /// every key up to its resume key as given its line.
    @Test func anItemDeletedBeforeItsPageGetsItsLineWithThePositionAtTheStop() async throws {
        let directus = FakeDirectus()
        directus.state.withLock { $0.beforePage[2] = [(id: 10, action: "delete", collection: "articles", key: "3")] }
        let first = try started(directus, items: 11)
        var batches: [EventBatch] = []
        for _ in 0..<2 { batches.append(try #require(try await first.next(timeout: .seconds(10)))) }
        try await readFourPages(directus, first)
        batches += try await first.stopCleanly()
        let ids = batches.flatMap { $0.events.map(\.id) }
        #expect(ids == [1, 2, 4, 5, 6, 7, 8, 9, 3].map { "snap_articles_\($0)_9" })
        let closing = try #require(batches.last)
        #expect(closing.events.map(\.id) == ["snap_articles_3_9"] && closing.events.first?.json["data"] == .null)
        #expect(closing.progress?.snapshotPositions["articles"]?.after == "9")
        let state = first.store.subscriptions["articles"]
        #expect(state?.snapshotAfter == "9" && state?.snapshotLines == 9)

        let second = try restart(directus, in: first)
        let rest = try await second.collect(3)
        try await second.wait { second.store.subscriptions["articles"]?.snapshotDone == true }
        await second.halt()
        #expect(rest.map(\.id) == ["snap_articles_10_9", "snap_articles_11_9", "act_10"])
    }
}
