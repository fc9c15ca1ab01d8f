import BridgeJSON
import BridgeSystem
import Synchronization
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

@Suite struct StatsReporterTests {
    let buckets: [Double] = [0.001, 0.01, 0.1, 1]

    @Test func eachLineCoversOnlyItsOwnWindow() {
        let lag = Histogram(buckets: buckets)
        let start = ContinuousClock.now
        let reporter = StatsReporter(interval: .seconds(60), lag: lag, logger: .silent)
        var depth = 7.0
        reporter.addGauge("outbox.depth") { 3 }
        reporter.addGauge(StatsReporter.Key.queueDepth) { [depth] in depth }
        depth = 0
        for value in [0.0005, 0.005, 0.005, 0.05] { lag.observe(value) }

        let first = reporter.takeLine(now: start + .seconds(2))
        #expect(first[StatsReporter.Key.events] == .integer(4))
        #expect(first[StatsReporter.Key.lagP50] == .seconds(0.01))
        #expect(first[StatsReporter.Key.lagP99] == .seconds(0.1))
        #expect(first["outbox.depth"] == .integer(3))
        #expect(first[StatsReporter.Key.queueDepth] == .integer(7))

        let quiet = reporter.takeLine(now: start + .seconds(4))
        #expect(quiet[StatsReporter.Key.events] == .integer(0))
        #expect(quiet[StatsReporter.Key.eventsPerSecond] == .number(0))
        #expect(quiet[StatsReporter.Key.lagP50] == nil)

        lag.observe(5)  // above the last bucket
        let slow = reporter.takeLine(now: start + .seconds(5))
        #expect(slow[StatsReporter.Key.events] == .integer(1))
        #expect(slow[StatsReporter.Key.lagP99] == .seconds(.infinity))
    }

    @Test func rateIsPerSecondOfTheWindow() {
        let lag = Histogram(buckets: buckets)
        let start = ContinuousClock.now
        let reporter = StatsReporter(interval: .seconds(60), lag: lag, logger: .silent)
        _ = reporter.takeLine(now: start)
        for _ in 0..<25 { lag.observe(0.0005) }
        #expect(reporter.takeLine(now: start + .seconds(10))[StatsReporter.Key.eventsPerSecond] == .number(2.5))
    }

    @Test func formatting() {
        #expect(StatsReporter.formatSeconds(0.0005) == "500us")
        #expect(StatsReporter.formatSeconds(0.0025) == "2.5ms")
        #expect(StatsReporter.formatSeconds(1) == "1s")
        #expect(StatsReporter.formatSeconds(300) == "5m")
        #expect(StatsReporter.formatSeconds(3600) == "1h")
        #expect(StatsReporter.roundedRate(1234.56) == 1234.6)
    }

    /// `log.stats_interval: 0s` (off) logs nothing, and the reporter still runs until it is stopped: `run`'s service
    /// group takes a service that ends by itself for a failure. It returned at once, and `run` exited 1 ("stats:
    /// stopped on its own") right after starting, with every `stats_interval: 0s` configuration.
    @Test func aZeroIntervalLogsNothingAndEndsOnlyWhenStopped() async {
        let lines = CountingLogHandler()
        let reporter = StatsReporter(
            interval: .zero, lag: Histogram(buckets: buckets), logger: Logger(label: "stats", handler: lines))
        let stop = ShutdownSignal()
        let ended = Atomic<Bool>(false)
        async let running: Void = {
            await reporter.run(stop: stop)
            ended.store(true, ordering: .releasing)
        }()
        _ = await ShutdownSignal().sleep(for: .milliseconds(300))  // long enough for a reporter that returns at once
        let endedEarly = ended.load(ordering: .acquiring)
        #expect(!endedEarly, "returned before it was stopped")
        stop.trigger()
        await running
        let endedAtStop = ended.load(ordering: .acquiring)
        #expect(endedAtStop)
        let logged = lines.count.load(ordering: .relaxed)
        #expect(logged == 0)
    }

    @Test func runStopsWhenSignalled() async {
        let reporter = StatsReporter(interval: .milliseconds(10), lag: Histogram(buckets: buckets), logger: .silent)
        let stop = ShutdownSignal()
        async let running: Void = reporter.run(stop: stop)
        stop.trigger()
        await running
    }
}

/// Counts the records logged through it.
private final class CountingLogHandler: LogHandler {
    let count = Atomic<Int>(0)
    let minimumLevel: LogLevel = .trace
    func log(level: LogLevel, message: String, metadata: LogFields, label: String) {
        count.add(1, ordering: .relaxed)
    }
}

@Suite struct SinkTestEventTests {
    /// The test event is signed by the sink's signer (whose vectors are in BridgeWebhookTests).
    @Test func theTestEventIsSignedLikeADelivery() throws {
        let event = SinkTestEvent(collection: "articles")
        let secrets = ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "plain text secret"]
        let expected = try WebhookSigner(secrets: secrets).signature(
            id: event.id, timestamp: event.timestamp, body: event.body)
        #expect(event.signature(secrets: secrets) == expected)
        #expect(event.signature(secrets: secrets)?.split(separator: " ").count == 2)
        #expect(event.signature(secrets: []) == nil)
    }

    @Test func bodyIsAnEventShapedJSONObject() throws {
        let event = SinkTestEvent(
            collection: "articles",
            now: Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000)
        )
        let body = try JSONValue.parse(event.body)
        #expect(body["id"]?.stringValue == event.id)
        #expect(event.id.hasPrefix("evt_test_"))
        #expect(body["type"]?.stringValue == "directus.bridge.test")
        #expect(body["collection"]?.stringValue == "articles")
        #expect(body["time"]?.stringValue == "2023-11-14T22:13:20.000Z")
        #expect(event.timestamp == 1_700_000_000)
    }
}
