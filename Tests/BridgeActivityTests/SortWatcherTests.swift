import BridgeConfig
import BridgeJSON
import BridgeSystem
import Synchronization
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

extension FakeDirectus: SortSource {
    func orderPage(collection: String, primaryKey: String, sortField: String, after: JSONValue?, limit: Int)
        async throws(DirectusError) -> [JSONValue]
    {
        try await itemsPageIgnoringFilter(collection, primaryKey: primaryKey, fields: [primaryKey, sortField])
            .filter { item in
                sortOrderIgnoresCursor || after.map { Self.keyOrder($0, item[primaryKey] ?? .null) ?? false } ?? true
            }
            .prefix(limit).map { $0 }
    }

    func recordedKeys(collection: String, keys: [String], after: Int64) async throws(DirectusError) -> Set<ItemKey> {
        state.withLock { state in
            let asked = Set(keys.map(ItemKey.init))
            return Set(state.rows.values.filter {
                $0.collection == collection && $0.id > after && ($0.action == "create" || $0.action == "update")
            }.compactMap(\.item).map(ItemKey.init).filter(asked.contains))
        }
    }

    /// Every item of `collection` in key order with only `fields`, counted as an order read.
    private func itemsPageIgnoringFilter(_ collection: String, primaryKey: String, fields: [String])
        async throws(DirectusError) -> [JSONValue]
    {
        state.withLock { state in
            state.orderReads += 1
            return (state.items[collection] ?? [:]).values.sorted {
                Self.keyOrder($0[primaryKey] ?? .null, $1[primaryKey] ?? .null) ?? false
            }.map { item in
                guard case .object(let object) = item else { return item }
                var selected = JSONObject()
                for member in object where fields.contains(member.key) { selected[member.key] = member.value }
                return .object(selected)
            }
        }
    }

    var sortOrderIgnoresCursor: Bool { state.withLock { $0.ignoreCursor } }
}

/// Runs a `SortWatcher` over `FakeDirectus`'s `chapters` (sort field `sort`) and collects what it queues.
final class SortHarness: @unchecked Sendable {
    // @unchecked: immutable after init; each stored value is Sendable or only used by the test.
    let directus = FakeDirectus()
    let inbox = SinkInbox(
        sinkID: "test", capacity: 1000, maxBytes: 256 << 20, registry: MetricsRegistry(),
        pipelineMetrics: PipelineMetrics(registry: MetricsRegistry()), logger: .silent)
    var queue: EventQueue { inbox.queue }
    let wakeup = SortWakeup()
    let stop = ShutdownSignal()
    let watcher: SortWatcher
    private var task: Task<Void, Never>?

    init(fromActivityLog: Bool = false, maxItems: Int = 100, pageSize: Int = 100, chapters: Int = 5) {
        for n in 1...chapters { directus.seed("chapters", "\(n)", Self.chapter(n, sort: n)) }
        let subscription = ActivitySubscription(
            uid: "chapters", collection: "chapters", events: [.create, .update, .delete],
            query: ItemQuery(collection: "chapters", primaryKey: "id", query: nil), snapshot: false)
        watcher = SortWatcher(
            collections: [
                SortedCollection(
                    name: "chapters", primaryKey: "id", sortField: "sort", subscriptions: [subscription],
                    fromActivityLog: fromActivityLog)
            ],
            source: directus, sinks: SinkFanOut([inbox]), wakeup: wakeup, maxItems: maxItems, pageSize: pageSize,
            retryDelay: .milliseconds(5), maxRetryDelay: .milliseconds(20),
            metrics: PipelineMetrics(registry: MetricsRegistry()), logger: .silent)
    }

    static func chapter(_ id: Int, sort: Int) -> JSONValue {
        ["id": JSONValue(Int64(id)), "title": .string("Chapter \(id)"), "sort": JSONValue(Int64(sort))]
    }

    /// Sets sort values as a manual sort leaves them (no activity rows).
    func setSort(_ values: [Int: Int]) {
        for (id, sort) in values { directus.seed("chapters", "\(id)", Self.chapter(id, sort: sort)) }
    }

    var orderReads: Int { directus.state.withLock { $0.orderReads } }

    func start() {
        let watcher = self.watcher
        let stop = self.stop
        task = Task(executorPreference: ReaderHarness.executor) { await watcher.run(stop: stop) }
    }

    /// Waits until the watcher has read the order `count` times.
    func waitForOrderReads(_ count: Int) async throws {
        try await withTaskExecutorPreference(ReaderHarness.executor) {
            let deadline = ContinuousClock.now + .seconds(10)
            while orderReads < count && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
        }
        #expect(orderReads >= count)
    }

    /// The events of the next queued batch ("key:sort" and the batch's events).
    func nextBatch() async throws -> [EncodedEvent] {
        try await withTaskExecutorPreference(ReaderHarness.executor) {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if let batch = queue.take(timeout: .milliseconds(5)) { return batch.events }
            }
            return []
        }
    }

    func halt() async {
        stop.trigger()
        queue.close()
        await task?.value
    }

    /// Whether the watcher's task ended by itself.
    func finished(within timeout: Duration) async -> Bool {
        guard let task else { return false }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { await task.value; return true }
            group.addTask { try? await Task.sleep(for: timeout); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}

func moves(_ events: [EncodedEvent]) -> [String] {
    events.map { "\($0.key):\($0.json["data"]?["sort"]?.serializedString() ?? "?")" }
}

@Suite struct SortOrderTests {
    @Test func movedIsWhatChangedAmongItemsInBoth() {
        var before = SortOrder()
        for (key, value) in [("1", "1"), ("2", "2"), ("3", "null"), ("4", "4")] { before.append(key: key, value: value) }
        var after = SortOrder()
        for (key, value) in [("1", "2"), ("2", "1"), ("3", "3"), ("5", "9")] { after.append(key: key, value: value) }
        // 4 is gone and 5 is new: a delete and a create, which Directus reports itself.
        #expect(before.moved(to: after) == ["1", "2", "3"])
        #expect(after.moved(to: after) == [])
        after.append(key: "1", value: "7")
        #expect(after.value(of: "1") == "2", "a key read twice keeps its first value")
        #expect(after.count == 4)
    }
}

@Suite struct SortWatcherTests {
    @Test func liveModeEmitsTheMovedItemsTheSocketDidNotDeliver() async throws {
        let harness = SortHarness()
        harness.start()
        try await harness.waitForOrderReads(1)
        harness.setSort([1: 4, 2: 1, 3: 2, 4: 3])  // chapter 1 dragged to chapter 4's place
        harness.wakeup.updateSeen(collection: "chapters", keys: ["1"], delivered: true)
        let events = try await harness.nextBatch()
        await harness.halt()
        #expect(moves(events) == ["2:1", "3:2", "4:3"])
        #expect(events.allSatisfy { $0.event == .update && $0.origin == .live && $0.seq == nil })
        #expect(events.allSatisfy { $0.id.hasPrefix("evt_") } && Set(events.map(\.id)).count == 3)
        #expect(events[0].json["data"] == SortHarness.chapter(2, sort: 1), "read back with the subscription's query")
    }

    @Test func anUpdateThatKeptItsSortValueReadsNoOrder() async throws {
        let harness = SortHarness()
        harness.start()
        try await harness.waitForOrderReads(1)
        harness.wakeup.updateSeen(collection: "chapters", keys: ["5"], delivered: true)  // a title change
        harness.setSort([1: 2, 2: 1])
        harness.wakeup.updateSeen(collection: "chapters", keys: ["2"], delivered: true)
        let events = try await harness.nextBatch()
        await harness.halt()
        #expect(moves(events) == ["1:2"])
        // Two reads of the order, at the start and for the one real move, each a page and the empty page that ends
        // it (a short page is not the end: a server may cap its answers); the title change cost one small read.
        #expect(harness.orderReads == 4)
    }

    @Test func activityModeLeavesWhatTheLogRecordsToTheReader() async throws {
        let harness = SortHarness(fromActivityLog: true)
        harness.start()
        try await harness.waitForOrderReads(1)
        // A tracked update of 5's sort value (the activity reader delivers it), then an untracked sort of 1 and 2.
        harness.directus.commit(1, "update", "chapters", "5", item: SortHarness.chapter(5, sort: 9))
        harness.setSort([1: 2, 2: 1])
        harness.wakeup.updateSeen(collection: "chapters", keys: ["5"], delivered: false)
        harness.wakeup.updateSeen(collection: "chapters", keys: ["1"], delivered: false)
        let events = try await harness.nextBatch()
        await harness.halt()
        #expect(moves(events) == ["1:2", "2:1"], "the dragged item too: the log has nothing for it")
    }

    /// Two items whose keys Swift holds equal, "é" (U+00E9) and "e\u{301}" — two items to Directus: a tracked update
    /// of "é" (the activity reader delivers it) and an untracked sort of "e\u{301}". Before: the log's record of "é"
    /// was taken for "e\u{301}" too (the recorded keys were a `Set<String>`, as were the socket's delivered ones), and
    /// the moved item got no line.
    @Test func anItemWhoseKeyEqualsARecordedOnesAsAStringStillGetsItsSortLine() async throws {
        let harness = SortHarness(fromActivityLog: true, chapters: 1)
        let (composed, decomposed) = ("\u{E9}", "e\u{301}")
        harness.directus.seed("chapters", composed, ["id": .string(composed), "sort": 2])
        harness.directus.seed("chapters", decomposed, ["id": .string(decomposed), "sort": 3])
        harness.start()
        try await harness.waitForOrderReads(1)
        harness.directus.commit(1, "update", "chapters", composed, item: ["id": .string(composed), "sort": 9])
        harness.directus.seed("chapters", decomposed, ["id": .string(decomposed), "sort": 5])
        harness.wakeup.updateSeen(collection: "chapters", keys: [composed], delivered: false)
        let events = try await harness.nextBatch()
        await harness.halt()
        #expect(events.map { Array($0.key.utf8) } == [Array(decomposed.utf8)], "\(moves(events))")
    }

    /// The same in live mode: the socket delivered "é"'s update itself; "e\u{301}", sorted without an event, still gets
    /// its line. Before: the delivered keys (a `Set<String>`) took it for "é".
    @Test func anItemWhoseKeyEqualsADeliveredOnesAsAStringStillGetsItsSortLine() async throws {
        let harness = SortHarness(chapters: 1)
        let (composed, decomposed) = ("\u{E9}", "e\u{301}")
        harness.directus.seed("chapters", composed, ["id": .string(composed), "sort": 2])
        harness.directus.seed("chapters", decomposed, ["id": .string(decomposed), "sort": 3])
        harness.start()
        try await harness.waitForOrderReads(1)
        harness.directus.seed("chapters", composed, ["id": .string(composed), "sort": 9])
        harness.directus.seed("chapters", decomposed, ["id": .string(decomposed), "sort": 5])
        harness.wakeup.updateSeen(collection: "chapters", keys: [composed], delivered: true)
        let events = try await harness.nextBatch()
        await harness.halt()
        #expect(events.map { Array($0.key.utf8) } == [Array(decomposed.utf8)], "\(moves(events))")
    }

    @Test func aReconnectChecksEverythingAsBackfill() async throws {
        let harness = SortHarness()
        harness.start()
        try await harness.waitForOrderReads(1)
        harness.setSort([3: 4, 4: 3])  // sorted while the socket was down: no event at all
        harness.wakeup.socketReconnected()
        let events = try await harness.nextBatch()
        await harness.halt()
        #expect(moves(events) == ["3:4", "4:3"])
        #expect(events.allSatisfy { $0.origin == .backfill })
    }

    @Test func filteredOutItemsGetNoLine() async throws {
        let harness = SortHarness()
        harness.directus.setFilter("chapters") { $0["id"] != 3 }
        harness.start()
        try await harness.waitForOrderReads(1)
        harness.setSort([2: 3, 3: 2])
        harness.wakeup.updateSeen(collection: "chapters", keys: ["2"], delivered: false)
        let events = try await harness.nextBatch()
        await harness.halt()
        #expect(moves(events) == ["2:3"])
    }

    @Test func aCollectionAboveTheLimitIsNotFollowed() async throws {
        let harness = SortHarness(maxItems: 3)
        harness.start()
        #expect(await harness.finished(within: .seconds(10)), "nothing to follow: the watcher ends")
        #expect(harness.queue.take(timeout: .milliseconds(1)) == nil)
        await harness.halt()
    }

    @Test func aServerThatIgnoresTheCursorCannotKeepTheWatcherReading() async throws {
        let harness = SortHarness(pageSize: 2)
        harness.directus.state.withLock { $0.ignoreCursor = true }
        harness.start()
        try await harness.waitForOrderReads(2)
        harness.setSort([1: 2, 2: 1])
        harness.wakeup.updateSeen(collection: "chapters", keys: ["1"], delivered: false)
        let events = try await harness.nextBatch()
        await harness.halt()
        #expect(moves(events) == ["1:2", "2:1"])
        #expect(harness.orderReads <= 5, "each read stops when a page does not move past the last key")
    }

    @Test func transportFailuresAreRetried() async throws {
        let harness = SortHarness()
        harness.directus.failNext(2)
        harness.start()
        try await harness.waitForOrderReads(1)
        harness.setSort([4: 5, 5: 4])
        harness.wakeup.updateSeen(collection: "chapters", keys: ["5"], delivered: true)
        let events = try await harness.nextBatch()
        await harness.halt()
        #expect(moves(events) == ["4:5"])
    }
}
