import BridgeJSON
import BridgeSystem
import BridgeTestSupport
import Synchronization
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// Issue 10, defect 6: a REST answer over the size limit (large items, 500 keys per read) was cut, failed to parse,
/// and the same page was read again forever. Reads are now bounded by answer size. The limits are scaled down here
/// (64 KiB per read, 256 KiB for one item alone) so that answers stay small.
@Suite struct AnswerSizeTests {
    static let limits = AnswerLimits(normal: 64 << 10, single: 256 << 10)

    /// What a source reported.
    final class Reports: Sendable {
        private let events = Mutex<[AnswerSizeEvent]>([])
        func append(_ event: AnswerSizeEvent) { events.withLock { $0.append(event) } }
        var all: [AnswerSizeEvent] { events.withLock { $0 } }
    }

    /// The source over `directus`, recording what it reports.
    static func source(_ directus: SizedDirectus) -> (DirectusActivitySource, Reports) {
        let reports = Reports()
        let source = DirectusActivitySource(api: directus.api, limits: limits, report: { reports.append($0) })
        return (source, reports)
    }

    static let query = ItemQuery(collection: "articles", primaryKey: "id", query: nil)

    @Test func itemsOverTheLimitAreReadInSmallerRequestsAndTheirSizeIsRemembered() async throws {
        let directus = SizedDirectus(defaultLimit: Self.limits.normal)
        for key in 1...400 { directus.create(Int64(key), key: key, size: 1000) }
        let (source, events) = Self.source(directus)
        let keys = (1...400).map(String.init)
        let first = try await source.items(Self.query, keys: keys)
        #expect(first.items.compactMap { Self.query.key(of: $0) } == keys)
        #expect(first.tooLarge.isEmpty)
        let cut = directus.state.withLock { $0.truncated["/items/articles"] ?? 0 }
        #expect(cut >= 1)
        #expect(events.all.count == cut, "every split is reported")
        #expect(events.all.allSatisfy { if case .split = $0 { true } else { false } })

        // The next read asks for few enough keys at once: no answer is cut.
        let second = try await source.items(Self.query, keys: keys)
        #expect(second.items.count == 400)
        #expect(directus.state.withLock { $0.truncated["/items/articles"] ?? 0 } == cut)
    }

    @Test func anItemOverTheLimitAloneIsReadWithTheSingleLimitAndOneOverThatIsLeftOutAndReported() async throws {
        let directus = SizedDirectus(defaultLimit: Self.limits.normal)
        for key in 1...10 { directus.create(Int64(key), key: key, size: 100) }
        directus.create(11, key: 11, size: 100 << 10)  // over 64 KiB, under 256 KiB
        directus.create(12, key: 12, size: 300 << 10)  // over both
        let (source, events) = Self.source(directus)
        let read = try await source.items(Self.query, keys: (1...12).map(String.init))
        #expect(read.items.compactMap { Self.query.key(of: $0) } == (1...11).map(String.init))
        #expect(read.items.last?["body"]?.stringValue?.utf8.count == 100 << 10)
        #expect(read.tooLarge == ["12"])
        let omitted = OmittedForSize(part: "data", collection: "articles", keys: ["12"], limit: 256 << 10)
        #expect(events.all.contains(.omitted(omitted)))
    }

    @Test func activityPagesAreFilledWithSmallerRequests() async throws {
        let directus = SizedDirectus(defaultLimit: Self.limits.normal)
        for id in 1...300 { directus.create(Int64(id), key: id, size: 1000) }
        let (source, _) = Self.source(directus)
        // A full page means "there is more": it is filled up to the limit with smaller requests.
        let page = try await source.activity(after: 0, limit: 200)
        #expect(page.map(\.id) == (1...200).map { Int64($0) })
        #expect(page.allSatisfy { $0.delta?["body"]?.stringValue?.utf8.count == 1000 })
        #expect(directus.state.withLock { $0.truncated["/activity"] ?? 0 } >= 1)
        let rest = try await source.activity(after: 200, limit: 500)
        #expect(rest.map(\.id) == (201...300).map { Int64($0) }, "a short page only at the end of the log")
        let gaps = try await source.activity(in: [5...9, 250...260], limit: 500)
        #expect(gaps.map(\.id) == (Array(5...9) + Array(250...260)).map { Int64($0) })
    }

    @Test func anActivityRowOverTheSingleLimitComesWithoutItsDelta() async throws {
        let directus = SizedDirectus(defaultLimit: Self.limits.normal)
        directus.create(1, key: 1, size: 10)
        directus.create(2, key: 2, size: 300 << 10)
        directus.create(3, key: 3, size: 10)
        let (source, events) = Self.source(directus)
        let page = try await source.activity(after: 0, limit: 500)
        #expect(page.map(\.id) == [1, 2, 3])
        #expect(page.map { $0.delta != nil } == [true, false, true])
        #expect(page[1].item == "2" && page[1].change == .create)
        let omitted = OmittedForSize(part: "delta", collection: "articles", keys: ["2"], limit: 256 << 10)
        #expect(events.all.contains(.omitted(omitted)))
    }

    @Test func aSnapshotPageNamesAnItemTooLargeToReadAndGoesOnAfterIt() async throws {
        let directus = SizedDirectus(defaultLimit: Self.limits.normal)
        for key in 1...10 { directus.create(Int64(key), key: key, size: key == 5 ? 300 << 10 : 100) }
        let (source, _) = Self.source(directus)
        let page = try await source.itemsPage(Self.query, after: nil, limit: 500)
        #expect(page.total == 10)
        let summary = page.entries.map { entry -> String in
            switch entry {
            case .item(let item): Self.query.key(of: item) ?? "?"
            case .tooLarge(let key): "big " + (key.keyString ?? "?")
            }
        }
        #expect(summary == ["1", "2", "3", "4", "big 5", "6", "7", "8", "9", "10"])
        let revisions = try await source.revisionSnapshots(activityIDs: [4, 5, 6])
        #expect(revisions.keys.sorted() == [4, 6], "a revision too large to read is left out (and reported)")
    }

    @Test func theReaderDeliversEveryChangeOfLargeItemsAndSaysWhatItLeftOut() async throws {
        let directus = SizedDirectus(defaultLimit: Self.limits.normal)
        for id in 1...300 { directus.create(Int64(id), key: id, size: id == 150 ? 300 << 10 : 1000) }
        // What the bridge wires in `ActivityService`: reports go to the activity metrics and the log.
        let registry = MetricsRegistry()
        let metrics = ActivityMetrics(registry: registry) { nil }
        let logs = RecordingLogHandler()
        let logger = logs.logger()
        let source = DirectusActivitySource(api: directus.api, limits: Self.limits, report: { event in
            metrics.report(event, logger: logger)
        })
        let directory = try ReaderHarness.stateFromTheStart()
        let harness = try ReaderHarness(
            directus: FakeDirectus(),
            subscriptions: [subscription()],
            directory: directory,
            source: source
        )
        harness.start()
        let events = try await harness.collect(300, timeout: .seconds(30))
        await harness.halt()
        #expect(events.map(\.seq) == (1...300).map { Int64($0) }, "every change once, none re-read forever")
        let big = try #require(events.first { $0.seq == 150 })
        #expect(big.json["data"] == .null, "too large even alone: the line goes out without data")
        #expect(big.json["delta"] == nil)
        #expect(events.filter { $0.seq != 150 }.allSatisfy { $0.json["data"]?["body"]?.stringValue?.count == 1000 })
        #expect(harness.store.cursor?.committed == 300)

        let errors = logs.all.filter { $0.level == .error }
        #expect(errors.map { $0.metadata["part"] } == ["delta", "data"])
        #expect(errors.allSatisfy { $0.metadata["keys"] == "150" && $0.metadata[LogKey.collection] == "articles" })
        #expect(errors.allSatisfy { $0.metadata["reason"]?.contains("over 262144 bytes") == true })
        let rendered = registry.render()
        #expect(rendered.contains("directus_bridge_activity_omitted_for_size_total 2"))
        #expect(!rendered.contains("directus_bridge_activity_oversized_answers_total 0\n"))
    }
}
