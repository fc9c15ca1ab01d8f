import BridgeEvents
import BridgeJSON
import BridgeKafka
import BridgeNATS
import BridgeSinks
import BridgeSystem
import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Encoded events (~450-byte JSON, key = item key over 1000 items) through a broker sink's connector, driven as the
/// sink runner drives it, each against a Python client doing the same job in the same run.
///
///     bridge-benchmarks kafka-sink [COUNT [runs=N] [nopeer] [property=NAME=VALUE ...] [outstanding=N]]
///                                                                   (default 200000 events, 5 runs)
///     bridge-benchmarks jetstream-sink [COUNT [runs=N] [nopeer] [storage=memory] [window=SECONDS]
///                                      [outstanding=N]]             (default 100000 events, 5 runs)
///     bridge-benchmarks mqtt-sink [COUNT [runs=N] [nopeer] [outstanding=N]]   (default 50000 events, 5 runs)
///     bridge-benchmarks amqp-sink [COUNT [runs=N] [nopeer] [outstanding=N]]   (default 50000 events, 5 runs)
///
/// `nopeer` skips the peers (for profiling ours alone); `drive=pages` or `drive=stream` runs one drive.
/// `property` sets a librdkafka property on both Kafka producers (ours through the sink's `properties`, the peer's
/// through its configuration). `storage`, `window` (the stream's duplicate window) and `outstanding` (the sink's
/// `max_outstanding`) vary what the server and the sink do per message, to measure the server's CPU per message under
/// each (defaults: file storage, 120 s, 10000).
///
/// Two ways of driving, as the runner does in each mode (`SinkRunner.deliver`):
/// - `pages`: activity mode — pages of 500 events (the activity reader's page), each `accept`ed and then
///   `makeDurable` (every event of the page confirmed) before the next, as the cursor may only move past confirmed
///   events. The peer does the same: produces/publishes a page, waits for every confirmation, then the next page.
/// - `stream`: live mode — every batch `accept`ed (which waits only while `max_outstanding` events are unconfirmed),
///   one `makeDurable` at the end. The peer keeps producing/publishing and waits for every confirmation at the end.
///
/// - `kafka-sink`: librdkafka's mock cluster (3 brokers, 6 partitions, replication 3, in this process), a `type: kafka`
///   sink with the contract's defaults vs confluent-kafka's producer with the same settings and messages
///   (Tests/tools/broker_peers/bench_kafka_producer.py) and vs librdkafka alone, the ceiling
///   (`BrokerBenchmarks+Kafka.swift`).
/// - `jetstream-sink`: a local nats-server with a file-storage stream, a `type: jetstream` sink with the contract's
///   defaults vs libnats alone (the ceiling, `BrokerBenchmarks+JetStream.swift`) and nats-py publishing with the same
///   `Nats-Msg-Id` and payloads (Tests/tools/broker_peers/bench_nats_publisher.py).
/// - `mqtt-sink`: a local mosquitto, a `type: mqtt` sink with QoS 1 (`outstanding` sets its `max_in_flight`) vs
///   paho-mqtt publishing the same payloads and user properties with as many in flight
///   (Tests/tools/broker_peers/bench_mqtt_publisher.py).
/// - `amqp-sink`: a local rabbitmq-server, a `type: amqp` sink with publisher confirms vs librabbitmq (the ceiling)
///   and pika publishing the same messages with as many in flight (`BrokerBenchmarks+AMQP.swift`).
/// - `redis-sink`: a local redis-server, see `BrokerBenchmarks+Redis.swift`.
///
/// Each reported value is the median of the runs (ours and the peer alternately): a shared VM's speed drifts.
enum BrokerBenchmarks {
    /// How the runner feeds the sink.
    enum Drive: String, CaseIterable {
        case pages, stream

        /// Events per `accept`: an activity page, or a live burst the runner takes from its inbox at once.
        var batchSize: Int { 500 }

        /// The peer's `--page` argument (0: no page barrier).
        var peerPage: Int { self == .pages ? batchSize : 0 }
    }

    /// `ours 12.3 + server 14.0`: CPU microseconds per event of a client and of the server (`other` empty: the
    /// client's alone).
    static func perEvent(
        _ client: String,
        _ clientCPU: Double,
        _ other: String,
        _ otherCPU: Double,
        _ count: Int
    )
        -> String
    {
        let first = String(format: "%@ %.2f", client, clientCPU / Double(count) * 1e6)
        return other.isEmpty ? first : first + String(format: " + %@ %.2f", other, otherCPU / Double(count) * 1e6)
    }

    /// The 1-minute load average, as /proc/loadavg says.
    static func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first.map(String.init)
            ?? "?"
    }

    /// The drives `drive=pages` or `drive=stream` names, both by default.
    static func drives(_ arguments: [String]) -> [Drive] {
        value(of: "drive", in: arguments).flatMap(Drive.init(rawValue:)).map { [$0] } ?? Drive.allCases
    }

    /// The value of a `name=value` argument.
    static func value(of name: String, in arguments: [String]) -> String? {
        arguments.first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
    }

    /// COUNT, `runs=N` (default 5: issue 27 asks for medians of at least five, and `Benchmarks/run` passes no
    /// arguments) and `nopeer` from the arguments.
    static func options(_ arguments: [String], defaultCount: Int) -> (count: Int, runs: Int, withPeer: Bool) {
        let count = arguments.first.flatMap(Int.init) ?? defaultCount
        let runs = value(of: "runs", in: arguments).flatMap(Int.init) ?? 5
        return (max(1, count), max(1, runs), !arguments.contains("nopeer"))
    }

    /// The state directory of this process's sinks (a broker sink keeps its dead letters there), removed by
    /// `removeStateDirectory` when the benchmark ends.
    static let stateDirectory = FileManager.default.temporaryDirectory.path + "/directus-bridge-bench-\(getpid())"

    /// Removes `stateDirectory`.
    static func removeStateDirectory() { try? FileManager.default.removeItem(atPath: stateDirectory) }

    /// A sink's context as the runtime makes it, with metrics registered but not served.
    static func benchContext() -> SinkContext {
        SinkContext(
            index: 0,
            sinkID: "bench",
            stateDir: stateDirectory,
            userAgent: "directus-bridge/bench",
            shutdownTimeout: .seconds(10),
            registry: MetricsRegistry(),
            stats: nil,
            logger: .silent,
            shared: SinkResources()
        )
    }

    /// Events per second through `sink` from the first `accept` until every event is confirmed, on a thread of its
    /// own as the runner runs (after a warm-up page that connects and learns the topic's partitions), and this
    /// process's CPU time meanwhile. The sink is closed afterwards.
    static func measure(_ sink: any SinkConnector, events: [EncodedEvent], drive: Drive) async throws
        -> (rate: Double, cpuSeconds: Double, threads: [String: Double])
    {
        let warmUp = events.prefix(drive.batchSize).map { event in
            var copy = event
            copy.id = "warm_" + event.id
            return copy
        }
        let pages = stride(from: 0, to: events.count, by: drive.batchSize).map {
            Array(events[$0..<min($0 + drive.batchSize, events.count)])
        }
        return try await DedicatedThreadExecutor(name: "bench sink").runAbandoningOnCancel {
            try await sink.connect()
            try await sink.accept(warmUp)
            try await sink.makeDurable()
            let cpuBefore = LivePipelineBenchmark.processCPUSeconds()
            let threadsBefore = ThreadCPU.snapshot()
            let start = ContinuousClock.now
            for page in pages {
                try await acceptWaiting(sink, page)
                if drive == .pages { try await sink.makeDurable() }
            }
            try await sink.makeDurable()
            let rate = Double(events.count) / (ContinuousClock.now - start).inSeconds
            let cpu = LivePipelineBenchmark.processCPUSeconds() - cpuBefore
            let threads = ThreadCPU.spent(from: threadsBefore, to: ThreadCPU.snapshot()) { name in
                name == "rdk:mock" ? "mock" : name.hasPrefix("rdk:") ? "librdkafka" : "ours"
            }
            try await sink.close()
            return (rate, cpu, threads)
        }
    }

    /// `accept`, trying again while the sink reports backpressure (`max_outstanding` unconfirmed), as the runner
    /// does for an activity batch; any other error ends the benchmark.
    private static func acceptWaiting(_ sink: any SinkConnector, _ page: [EncodedEvent]) async throws {
        while true {
            do {
                try await sink.accept(page)
                return
            } catch let error where error.isBackpressure {
                continue  // `accept` already waited a second for room
            }
        }
    }

    /// Event-shaped encoded events like the bridge makes (~450-byte bodies), `update`s of 1000 items of
    /// `articles`.
    static func makeEvents(count: Int, prefix: String) -> [EncodedEvent] {
        let now = Timestamp.now()
        return (0..<count).map { index in
            let key = "item-\(index % 1000)"
            let id = prefix + "_" + String(format: "%08d", index)
            let text = """
                {"id":"\(id)","type":"directus.items.update","collection":"articles","event":"update",\
                "key":"\(key)","seq":\(index),"data":{"id":"\(key)","title":"Article \(index)",\
                "body":"\(String(repeating: "lorem ipsum ", count: 22))","tags":["a","b"],"rating":4.5,"draft":null}}
                """
            return EncodedEvent(
                id: id,
                event: .update,
                collection: "articles",
                key: key,
                origin: .backfill,
                seq: Int64(index),
                time: now,
                receivedAt: now,
                subscription: "bench",
                body: Array(text.utf8)
            )
        }
    }

    /// The peer's rate and CPU seconds (its process's, over the timed part).
    static func peerResult(script: String, arguments: [String]) throws -> (rate: Double, cpuSeconds: Double) {
        try peerResult(output: try HelperProcess.runToEnd(script: script, arguments: arguments))
    }

    /// The rate and CPU seconds of a peer that printed them as the Python peers do (its last line, a JSON object
    /// with `messages_per_second`, `cpu_seconds` and `failures` 0).
    static func peerResult(output: String) throws -> (rate: Double, cpuSeconds: Double) {
        guard let line = output.split(separator: "\n").last,
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let rate = object["messages_per_second"] as? Double, (object["failures"] as? Int) == 0
        else { throw BenchmarkFailure.badPeerOutput(output) }
        return (rate, object["cpu_seconds"] as? Double ?? .nan)
    }

    static func report(
        _ benchmark: String,
        drive: Drive,
        what: String,
        ours: [Double],
        peer: String,
        peers: [Double],
        streamBound: String = "max_outstanding 10000"
    ) {
        let each = ours.indices.map { index in
            String(format: "%.0f", ours[index]) + (index < peers.count ? String(format: "/%.0f", peers[index]) : "")
        }
        let against = peer.isEmpty ? "peer" : peer
        FileHandle.standardError.write(
            Data("\(benchmark) \(drive.rawValue): runs (ours/\(against)) \(each.joined(separator: " "))\n".utf8)
        )
        let mode = drive == .pages ? "pages of 500, confirmed before the next" : "stream, \(streamBound)"
        BenchmarkResult(
            benchmark: benchmark,
            metric: "\(what), \(mode), median of \(ours.count)",
            value: median(ours),
            unit: "1/s",
            peer: peers.isEmpty ? nil : peer,
            peerValue: peers.isEmpty ? nil : median(peers)
        ).emit()
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
