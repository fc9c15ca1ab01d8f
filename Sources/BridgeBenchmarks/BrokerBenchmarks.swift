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
///     bridge-benchmarks kafka-sink [COUNT [runs=N] [nopeer]]        (default 200000 events, 3 runs)
///     bridge-benchmarks jetstream-sink [COUNT [runs=N] [nopeer]]    (default 100000 events, 3 runs)
///
/// `nopeer` skips the Python client (for profiling ours alone).
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
///   (Tests/tools/broker_peers/bench_kafka_producer.py).
/// - `jetstream-sink`: a local nats-server with a file-storage stream, a `type: jetstream` sink with the contract's
///   defaults vs nats-py publishing with the same `Nats-Msg-Id` and payloads
///   (Tests/tools/broker_peers/bench_nats_publisher.py).
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

    static func runKafka(_ arguments: [String]) async throws {
        let (count, runs, withPeer) = options(arguments, defaultCount: 200_000)
        let cluster = try KafkaMockCluster.make(brokers: 3)
        try cluster.createTopic("bench-ours", partitions: 6, replicationFactor: 3)
        try cluster.createTopic("bench-peer", partitions: 6, replicationFactor: 3)
        let config = KafkaSinkConfig(brokers: [cluster.bootstrapServers], topic: "bench-ours")
        let events = makeEvents(count: count, prefix: "evt")
        for drive in Drive.allCases {
            var ours: [Double] = []
            var peers: [Double] = []
            for _ in 0..<runs {
                let sink = try KafkaSinkType.makeConnector(config, context: benchContext())
                ours.append(try await measure(sink, events: events, drive: drive).rate)
                guard withPeer else { continue }
                peers.append(
                    try peerResult(
                        script: "broker_peers/bench_kafka_producer.py",
                        arguments: [cluster.bootstrapServers, "bench-peer", "\(count)", "--page", "\(drive.peerPage)"]
                    ).rate)
            }
            report("kafka-sink", drive: drive, what: "delivery-reported events/s (mock cluster, 3 brokers, acks=all)",
                ours: ours, peer: "python-confluent-kafka", peers: peers)
        }
    }

    static func runJetStream(_ arguments: [String]) async throws {
        let (count, runs, withPeer) = options(arguments, defaultCount: 100_000)
        let server = try BenchNATSServer.start()
        defer { server.stop() }
        let admin = try HelperProcess.runToEnd(
            script: "broker_peers/nats_admin.py",
            arguments: ["create-stream", server.url, "BENCH", "bench.>", "--storage", "file"]
        )
        guard admin.hasSuffix("OK") else { throw BenchmarkFailure.badPeerOutput(admin) }
        let config = JetStreamSinkConfig(servers: [server.url], subject: "bench.{collection}.{event}")
        for drive in Drive.allCases {
            var ours: [Double] = []
            var peers: [Double] = []
            var cpu: [String] = []
            for run in 0..<runs {
                // Ids of their own per run: the stream would drop repeated ones as duplicates (acknowledged anyway).
                let events = makeEvents(count: count, prefix: "evt\(drive.rawValue)\(run)")
                let sink = try JetStreamSinkType.makeConnector(config, context: benchContext())
                let serverBefore = server.cpuSeconds()
                let measured = try await measure(sink, events: events, drive: drive)
                ours.append(measured.rate)
                cpu.append(perEvent("ours", measured.cpuSeconds, "server", server.cpuSeconds() - serverBefore, count))
                guard withPeer else { continue }
                let peerServerBefore = server.cpuSeconds()
                let peer = try peerResult(
                    script: "broker_peers/bench_nats_publisher.py",
                    arguments: [
                        server.url, "bench.py.update", "\(count)", "--page", "\(drive.peerPage)",
                        "--prefix", "py\(drive.rawValue)\(run)",
                    ])
                peers.append(peer.rate)
                cpu.append(perEvent("peer", peer.cpuSeconds, "server", server.cpuSeconds() - peerServerBefore, count))
            }
            FileHandle.standardError.write(
                Data("jetstream-sink \(drive.rawValue): CPU µs/event \(cpu.joined(separator: "; "))\n".utf8))
            report("jetstream-sink", drive: drive, what: "acknowledged events/s (file-storage stream, one server)",
                ours: ours, peer: "python-nats-py", peers: peers)
        }
    }

    /// `ours 12.3 + server 14.0`: CPU microseconds per event of a client and of the server.
    private static func perEvent(_ client: String, _ clientCPU: Double, _ other: String, _ otherCPU: Double, _ count: Int)
        -> String
    {
        String(format: "%@ %.1f + %@ %.1f", client, clientCPU / Double(count) * 1e6, other, otherCPU / Double(count) * 1e6)
    }

    /// COUNT, `runs=N` and `nopeer` from the arguments.
    private static func options(_ arguments: [String], defaultCount: Int) -> (count: Int, runs: Int, withPeer: Bool) {
        let count = arguments.first.flatMap(Int.init) ?? defaultCount
        let runs = arguments.compactMap { $0.hasPrefix("runs=") ? Int($0.dropFirst(5)) : nil }.first ?? 3
        return (max(1, count), max(1, runs), !arguments.contains("nopeer"))
    }

    /// A sink's context as the runtime makes it, with metrics registered but not served.
    private static func benchContext() -> SinkContext {
        SinkContext(
            index: 0, sinkID: "bench", stateDir: FileManager.default.temporaryDirectory.path,
            userAgent: "directus-bridge/bench", caFile: nil, shutdownTimeout: .seconds(10),
            registry: MetricsRegistry(), stats: nil, logger: .silent, shared: SinkResources())
    }

    /// Events per second through `sink` from the first `accept` until every event is confirmed, on a blocking
    /// thread as the runner runs (after a warm-up page that connects and learns the topic's partitions), and this
    /// process's CPU time meanwhile. The sink is closed afterwards.
    private static func measure(_ sink: any SinkConnector, events: [EncodedEvent], drive: Drive) async throws
        -> (rate: Double, cpuSeconds: Double)
    {
        nonisolated(unsafe) let sink = sink  // used by one blocking job at a time, while this task waits
        let warmUp = events.prefix(drive.batchSize).map { event in
            var copy = event
            copy.id = "warm_" + event.id
            return copy
        }
        let pages = stride(from: 0, to: events.count, by: drive.batchSize).map {
            Array(events[$0..<min($0 + drive.batchSize, events.count)])
        }
        return try await BlockingExecutor.shared.perform {
            try sink.connect()
            try sink.accept(warmUp)
            try sink.makeDurable()
            let cpuBefore = LivePipelineBenchmark.processCPUSeconds()
            let start = ContinuousClock.now
            for page in pages {
                try acceptWaiting(sink, page)
                if drive == .pages { try sink.makeDurable() }
            }
            try sink.makeDurable()
            let rate = Double(events.count) / (ContinuousClock.now - start).inSeconds
            let cpu = LivePipelineBenchmark.processCPUSeconds() - cpuBefore
            try sink.close()
            return (rate, cpu)
        }
    }

    /// `accept`, trying again while the sink reports backpressure (`max_outstanding` unconfirmed), as the runner
    /// does for an activity batch; any other error ends the benchmark.
    private static func acceptWaiting(_ sink: any SinkConnector, _ page: [EncodedEvent]) throws {
        while true {
            do {
                try sink.accept(page)
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
                id: id, event: .update, collection: "articles", key: key, origin: .backfill, seq: Int64(index),
                time: now, receivedAt: now, subscription: "bench", body: Array(text.utf8))
        }
    }

    /// The peer's rate and CPU seconds (its process's, over the timed part).
    private static func peerResult(script: String, arguments: [String]) throws -> (rate: Double, cpuSeconds: Double) {
        let output = try HelperProcess.runToEnd(script: script, arguments: arguments)
        guard let line = output.split(separator: "\n").last,
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let rate = object["messages_per_second"] as? Double, (object["failures"] as? Int) == 0
        else { throw BenchmarkFailure.badPeerOutput(output) }
        return (rate, object["cpu_seconds"] as? Double ?? .nan)
    }

    private static func report(
        _ benchmark: String, drive: Drive, what: String, ours: [Double], peer: String, peers: [Double]
    ) {
        let each = ours.indices.map { index in
            String(format: "%.0f", ours[index]) + (index < peers.count ? String(format: "/%.0f", peers[index]) : "")
        }
        FileHandle.standardError.write(
            Data("\(benchmark) \(drive.rawValue): runs (ours/peer) \(each.joined(separator: " "))\n".utf8))
        let mode = drive == .pages ? "pages of 500, confirmed before the next" : "stream, max_outstanding 10000"
        BenchmarkResult(
            benchmark: benchmark, metric: "\(what), \(mode), median of \(ours.count)", value: median(ours),
            unit: "1/s", peer: peers.isEmpty ? nil : peer, peerValue: peers.isEmpty ? nil : median(peers)
        ).emit()
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}

/// A nats-server with JetStream on a free loopback port, for the benchmark.
struct BenchNATSServer {
    let process: Process
    let url: String
    let directory: URL

    static func start() throws -> BenchNATSServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-nats-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let port = try ListeningSocket(binding: SocketAddress(ipAddress: "127.0.0.1", port: 0)!).port
        let process = Process()
        // Debian installs it in /usr/sbin.
        process.executableURL = URL(
            fileURLWithPath: ["/usr/sbin/nats-server", "/usr/bin/nats-server"]
                .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/sbin/nats-server"
        )
        process.arguments = ["-a", "127.0.0.1", "-p", "\(port)", "-js", "-sd", directory.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let address = SocketAddress(ipAddress: "127.0.0.1", port: port)!
        for _ in 0..<200 where (try? Socket.connect(to: address, deadline: .now + .milliseconds(100))) == nil {
            usleep(50_000)
        }
        return BenchNATSServer(process: process, url: "nats://127.0.0.1:\(port)", directory: directory)
    }

    /// The server's CPU time so far (user + system, from /proc), 0 when it cannot be read.
    func cpuSeconds() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return 0 }
        // After the command's closing parenthesis: state is field 3; utime and stime are fields 14 and 15.
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}
