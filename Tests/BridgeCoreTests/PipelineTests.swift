import BridgeSystem
import Foundation
import Synchronization
import Testing

@testable import BridgeActivity
@testable import BridgeCore
@testable import BridgeDirectus
@testable import BridgeEvents
@testable import BridgeSinks

func makeEvent(_ n: Int, collection: String = "articles", event: ChangeEvent = .create) -> EncodedEvent {
    EncodedEvent(
        id: "evt_\(n)",
        event: event,
        collection: collection,
        key: "\(n)",
        origin: .live,
        seq: nil,
        time: Timestamp(microsecondsSinceEpoch: 0),
        receivedAt: Timestamp(microsecondsSinceEpoch: 0),
        subscription: collection,
        body: Array("{\"n\":\(n)}".utf8)
    )
}

@Suite struct EventQueueTests {
    @Test func offerRefusesWhenFullAndTakeDrainsInOrder() {
        let queue = EventQueue(capacity: 3, maxBytes: 256 << 20)
        #expect(queue.offer(EventBatch(events: [makeEvent(1), makeEvent(2)])))
        #expect(!queue.offer(EventBatch(events: [makeEvent(3), makeEvent(4)])))
        #expect(queue.offer(EventBatch(events: [makeEvent(3)])))
        #expect(queue.depth == 3)
        #expect(queue.take(timeout: .milliseconds(10))?.events.map(\.id) == ["evt_1", "evt_2"])
        #expect(queue.take(timeout: .milliseconds(10))?.events.map(\.id) == ["evt_3"])
        #expect(queue.take(timeout: .milliseconds(10)) == nil)
    }

    @Test func anOversizedBatchIsAcceptedWhenEmpty() {
        let queue = EventQueue(capacity: 1, maxBytes: 256 << 20)
        #expect(queue.offer(EventBatch(events: [makeEvent(1), makeEvent(2)])))
    }

    @Test func putWaitsForRoomInsteadOfDropping() async {
        let queue = EventQueue(capacity: 1, maxBytes: 256 << 20)
        #expect(queue.offer(EventBatch(events: [makeEvent(1)])))
        async let second = queue.put(EventBatch(events: [makeEvent(2)]))
        try? await Task.sleep(for: .milliseconds(20))
        #expect(queue.depth == 1)
        #expect(queue.take(timeout: .milliseconds(10))?.events.first?.id == "evt_1")
        #expect(await second)
        #expect(queue.take(timeout: .seconds(1))?.events.first?.id == "evt_2")
    }

    @Test func closeWakesWaitersAndLetsTheConsumerDrain() async {
        let queue = EventQueue(capacity: 1, maxBytes: 256 << 20)
        _ = queue.offer(EventBatch(events: [makeEvent(1)]))
        async let blocked = queue.put(EventBatch(events: [makeEvent(2)]))
        try? await Task.sleep(for: .milliseconds(20))
        queue.close()
        #expect(await blocked == false)
        #expect(!queue.offer(EventBatch(events: [makeEvent(3)])))
        #expect(queue.take(timeout: .milliseconds(10)) != nil)
        #expect(queue.isClosedAndEmpty)
    }

    /// A snapshot page waiting at a full queue gives way to a `resync` (`ActivityReaderLoop.waitTakingResyncs`): its
    /// cancelled put queues nothing, and the queue serves the next producer as before.
    @Test func aCancelledPutQueuesNothing() async {
        let queue = EventQueue(capacity: 1, maxBytes: 256 << 20)
        #expect(queue.offer(EventBatch(events: [makeEvent(1)])))
        let waiting = Task { await queue.put(EventBatch(events: [makeEvent(2)])) }
        try? await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        #expect(await waiting.value == false)
        #expect(queue.take(timeout: .milliseconds(10))?.events.first?.id == "evt_1")
        #expect(queue.take(timeout: .milliseconds(10)) == nil, "the cancelled batch was not queued")
        #expect(await queue.put(EventBatch(events: [makeEvent(3)])))
        #expect(queue.take(timeout: .milliseconds(10))?.events.first?.id == "evt_3")
    }
}

/// A sink that records what it accepted and can be told to fail.
final class RecordingSink: SinkConnector, @unchecked Sendable {
    let name: String
    let filter: EventFilter
    var connects = 0
    var accepted: [String] = []
    var failuresLeft = 0
    /// Accept calls answered "full" (backpressure) before it takes events again.
    var fullLeft = 0
    /// How many events of a batch it still takes when it answers "full" (`SinkError.acceptedPrefix`).
    var takesWhenFull = 0
    var permanentFailure = false
    /// Answers "full" at every other call, taking nothing then: a sink slower than its input, full at the first try
    /// of each batch.
    var fullEveryOtherCall = false
    private var answeredFull = false

    init(name: String, filter: EventFilter = EventFilter()) {
        self.name = name
        self.filter = filter
    }

    func accept(_ events: [EncodedEvent]) async throws(SinkError) {
        if permanentFailure { throw SinkError(sink: name, message: "gone", isRetriable: false) }
        if failuresLeft > 0 {
            failuresLeft -= 1
            throw SinkError(sink: name, message: "busy", isRetriable: true)
        }
        if fullEveryOtherCall {
            answeredFull.toggle()
            if answeredFull {
                throw SinkError(sink: name, message: "outbox full", isRetriable: true, isBackpressure: true)
            }
        }
        if fullLeft > 0 {
            fullLeft -= 1
            let taken = min(takesWhenFull, events.count)
            accepted += events.prefix(taken).map(\.id)
            throw SinkError(
                sink: name,
                message: "outbox full",
                isRetriable: true,
                isBackpressure: true,
                acceptedPrefix: taken
            )
        }
        accepted += events.map(\.id)
    }
    func connect() async throws(SinkError) { connects += 1 }
    var durableCalls = 0
    func makeDurable() async throws(SinkError) { durableCalls += 1 }
    func close() async throws(SinkError) {}
}

final class RecordingRecorder: ProgressRecorder, @unchecked Sendable {
    var recorded: [ActivityProgress] = []
    func record(_ progress: ActivityProgress) throws { recorded.append(progress) }
}

@Suite struct NDJSONSinkTests {
    @Test func appendsWholeLinesAndReopens() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ndjson-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("out.ndjson").path
        let sink = try NDJSONSink(path: path, fsync: .always)
        try await sink.accept([makeEvent(1), makeEvent(2)])
        // logrotate: move the file away, SIGHUP → reopen creates a new one.
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")
        try await sink.reopen()
        try await sink.accept([makeEvent(3)])
        try await sink.close()
        #expect(try String(contentsOfFile: path + ".1", encoding: .utf8) == "{\"n\":1}\n{\"n\":2}\n")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{\"n\":3}\n")
    }

    @Test func aFullDiskIsARetriableError() async throws {
        let sink = try NDJSONSink(path: "/dev/full", fsync: .never)
        await #expect {
            try await sink.accept([makeEvent(1)])
        } throws: { error in
            guard let error = error as? SinkError else { return false }
            return error.isRetriable && error.message.contains("No space left")
        }
    }
}

/// `path` naming a named pipe whose reader is not there (yet): `run` blocked in `open` before it logged a word, and
/// SIGTERM could not stop it (exit 1 at the second signal). The sink now opens without waiting and the runner retries
/// until a reader comes, like any sink that cannot deliver yet.
@Suite struct NDJSONNamedPipeTests {
    @Test func aNamedPipeWithoutAReaderIsARetriableErrorUntilOneComes() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ndjson-fifo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("events.fifo").path
        try #require(mkfifo(path, 0o600) == 0)
        // Before the fix the sink's open waited for a reader: one that opens and closes releases it.
        let opened = DispatchSemaphore(value: 0)
        let made = Mutex<NDJSONSink?>(nil)
        Thread.detachNewThread {
            let sink = try? NDJSONSink(path: path, fsync: .interval)
            made.withLock { $0 = sink }
            opened.signal()
        }
        let returned = opened.wait(timeout: .now() + .seconds(10)) == .success
        if !returned {
            let release = open(path, O_RDONLY | O_NONBLOCK)
            _ = opened.wait(timeout: .now() + .seconds(10))
            close(release)
        }
        #expect(returned, "opening the sink waited for a reader")
        let sink = try #require(made.withLock { $0 })
        await #expect {
            try await sink.accept([makeEvent(1)])
        } throws: { error in
            guard let error = error as? SinkError else { return false }
            return error.isRetriable && error.message.contains("no reader")
        }
        let reader = open(path, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        try await sink.accept([makeEvent(2)])
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = read(reader, &bytes, bytes.count)
        #expect(count > 0 && String(decoding: bytes.prefix(max(count, 0)), as: UTF8.self) == "{\"n\":2}\n")
        try await sink.close()
    }
}

@Suite struct MetricsRegistryTests {
    @Test func rendersPrometheusText() {
        let registry = MetricsRegistry()
        registry.counter("x_total", help: "X.", labels: [("a", "1")]).increment(by: 3)
        registry.counter("x_total", help: "X.", labels: [("a", "q\"uote")]).increment()
        registry.gauge("g", help: "G.").set(2.5)
        let histogram = registry.histogram("h_seconds", help: "H.", buckets: [0.1, 1])
        histogram.observe(0.05)
        histogram.observe(0.5)
        histogram.observe(5)
        registry.gaugeFunction("f", help: "F.") { 7 }
        let text = registry.render()
        #expect(text.contains("# TYPE x_total counter\nx_total{a=\"1\"} 3\nx_total{a=\"q\\\"uote\"} 1\n"))
        #expect(text.contains("g 2.5\n"))
        #expect(
            text.contains(
                "h_seconds_bucket{le=\"0.1\"} 1\nh_seconds_bucket{le=\"1\"} 2\nh_seconds_bucket{le=\"+Inf\"} 3\n"
            )
        )
        #expect(text.contains("h_seconds_count 3\n"))
        #expect(text.contains("f 7\n"))
        #expect(histogram.estimatedQuantile(0.5) == 1)
    }

    /// A run observed once with its count is the same distribution as its observations one by one.
    @Test func aRunOfEqualObservationsCountsAsEachOfThem() {
        let single = Histogram(buckets: [0.1, 1])
        let runs = Histogram(buckets: [0.1, 1])
        for value in [0.05, 0.05, 0.05, 0.5, 5, 5] { single.observe(value) }
        runs.observe(0.05, times: 3)
        runs.observe(0.5, times: 1)
        runs.observe(0.7, times: 0)
        runs.observe(5, times: 2)
        #expect(runs.snapshot() == single.snapshot())
    }

    /// `emitted` counts every event under its labels and observes every event's lag, also when labels and times
    /// change within a batch (runs are counted together, not merged across a change).
    @Test func emittedCountsAndObservesEveryEventOfMixedRuns() {
        let registry = MetricsRegistry()
        let metrics = PipelineMetrics(registry: registry)
        func event(_ n: Int, _ collection: String, _ kind: ChangeEvent, atSecond second: Int64) -> EncodedEvent {
            var event = makeEvent(n, collection: collection, event: kind)
            event.time = Timestamp(microsecondsSinceEpoch: second * 1_000_000)
            return event
        }
        let events = [
            event(1, "articles", .create, atSecond: 10), event(2, "articles", .create, atSecond: 10),
            event(3, "articles", .update, atSecond: 10), event(4, "pages", .update, atSecond: 9),
            event(5, "articles", .create, atSecond: 9),
        ]
        metrics.emitted(events, now: Timestamp(microsecondsSinceEpoch: 10_000_000))
        let expected = Histogram(buckets: latencyBuckets)
        for lag in [0.0, 0, 0, 1, 1] { expected.observe(lag) }
        #expect(metrics.lagHistogram.snapshot() == expected.snapshot())
        let text = registry.render()
        let series = "directus_bridge_events_emitted_total"
        #expect(text.contains(#"\#(series){collection="articles",event="create",origin="live"} 3"#))
        #expect(text.contains(#"\#(series){collection="articles",event="update",origin="live"} 1"#))
        #expect(text.contains(#"\#(series){collection="pages",event="update",origin="live"} 1"#))
    }

    /// The age of the last event is elapsed time: a wall clock stepped an hour forward or back between an emission and
    /// a scrape leaves it near 0. From wall-clock times it read 3,600 (an alert on "no events for an hour") and -3,600.
    @Test(arguments: [-3_600, 3_600])
    func theLastEventsAgeIgnoresAWallClockStep(stepSeconds: Int64) throws {
        let registry = MetricsRegistry()
        let metrics = PipelineMetrics(registry: registry)
        let emittedAt = Timestamp.now().microsecondsSinceEpoch - stepSeconds * 1_000_000  // the clock before the step
        metrics.emitted([makeEvent(1)], now: Timestamp(microsecondsSinceEpoch: emittedAt))
        let line = try #require(
            registry.render().split(separator: "\n").first { $0.hasPrefix("directus_bridge_last_event_age_seconds ") })
        let age = try #require(Double(line.split(separator: " ")[1]))
        #expect(age >= 0 && age < 60, "\(line)")
    }
}
