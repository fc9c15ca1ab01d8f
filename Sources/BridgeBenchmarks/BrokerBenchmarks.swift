import BridgeKafka
import BridgeNATS
import BridgeSystem
import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Event-sized messages (~450-byte JSON, key = item key over 1000 items) into a broker, each against a Python
/// client doing the same job in the same run.
///
/// - `kafka-produce`: librdkafka's mock cluster (3 brokers, 6 partitions, replication 3, in this process), our
///   `KafkaProducer` (idempotent, acks=all) counting delivery reports vs confluent-kafka's producer with the
///   same settings and messages (Tests/tools/broker_peers/bench_kafka_producer.py).
/// - `jetstream-publish`: a local nats-server with a file-storage stream, our `JetStreamPublisher` waiting for
///   every acknowledgement vs nats-py keeping 512 acknowledged publishes in flight
///   (Tests/tools/broker_peers/bench_nats_publisher.py).
enum BrokerBenchmarks {
    static func runKafka(_ arguments: [String]) async throws {
        let count = arguments.first.flatMap(Int.init) ?? 200_000
        let cluster = try KafkaMockCluster.make(brokers: 3)
        try cluster.createTopic("bench-ours", partitions: 6, replicationFactor: 3)
        try cluster.createTopic("bench-peer", partitions: 6, replicationFactor: 3)
        let producer = try KafkaProducer.make(
            settings: KafkaProducerSettings(
                bootstrapServers: [cluster.bootstrapServers],
                properties: ["linger.ms": "5"],
                maxOutstanding: 100_000
            ),
            logger: .silent
        )
        _ = try await producer.send([KafkaMessage(topic: "bench-ours", key: "warm", value: Array("warm".utf8))])
        let messages = (0..<count).map { index in
            let event = eventPayload(index: index, prefix: "evt")
            return KafkaMessage(
                topic: "bench-ours",
                key: event.key,
                headers: [
                    KafkaHeader(name: "id", value: event.id), KafkaHeader(name: "type", value: "items.update"),
                    KafkaHeader(name: "collection", value: "articles"), KafkaHeader(name: "event", value: "update"),
                ],
                value: event.payload
            )
        }
        let ours = try await measure(messages, what: "producer") { batch, done in
            try await producer.submit(batch) { outcomes in done(outcomes.filter { !$0.isDelivered }.count) }
        }
        await producer.close(drainTimeout: .seconds(5))
        let peer = try HelperProcess.runToEnd(
            script: "broker_peers/bench_kafka_producer.py",
            arguments: [cluster.bootstrapServers, "bench-peer", "\(count)"]
        )
        let peerRate = try rate(fromPeer: peer)
        BenchmarkResult(
            benchmark: "kafka-produce",
            metric: "delivered messages/s (mock cluster, 3 brokers, acks=all)",
            value: ours,
            unit: "1/s",
            peer: "python-confluent-kafka",
            peerValue: peerRate
        ).emit()
    }

    static func runJetStream(_ arguments: [String]) async throws {
        let count = arguments.first.flatMap(Int.init) ?? 100_000
        let server = try BenchNATSServer.start()
        defer { server.stop() }
        let admin = try HelperProcess.runToEnd(
            script: "broker_peers/nats_admin.py",
            arguments: ["create-stream", server.url, "BENCH", "bench.>", "--storage", "file"]
        )
        guard admin.hasSuffix("OK") else { throw BenchmarkFailure.badPeerOutput(admin) }
        let connection = try await NATSConnection.connect(
            settings: NATSSettings(servers: [server.url]),
            logger: .silent
        )
        let publisher = try JetStreamPublisher.make(
            connection: connection,
            settings: JetStreamPublisherSettings(maxOutstanding: 4096)
        )
        let messages = (0..<count).map { index in
            let event = eventPayload(index: index, prefix: "evt")
            return JetStreamMessage(
                subject: "bench.articles.update",
                messageID: event.id,
                orderingKey: event.key,
                payload: event.payload
            )
        }
        let ours = try await measure(messages, what: "publisher") { batch, done in
            try await publisher.submit(batch) { outcomes in done(outcomes.filter { $0.ack == nil }.count) }
        }
        await publisher.close(drainTimeout: .seconds(5))
        await connection.close()
        let peer = try HelperProcess.runToEnd(
            script: "broker_peers/bench_nats_publisher.py",
            arguments: [server.url, "bench.py.update", "\(count)"]
        )
        let peerRate = try rate(fromPeer: peer)
        BenchmarkResult(
            benchmark: "jetstream-publish",
            metric: "acknowledged messages/s (file-storage stream, one server)",
            value: ours,
            unit: "1/s",
            peer: "python-nats-py",
            peerValue: peerRate
        ).emit()
    }

    /// Submits `messages` in batches of 1000 (each `submit` reports its batch's failures once) and returns messages
    /// per second from the first submit to the last completion; throws if any message failed.
    private static func measure<Message>(
        _ messages: [Message],
        what: String,
        submit: ([Message], @escaping @Sendable (_ failed: Int) -> Void) async throws -> Void
    ) async throws -> Double {
        let tally = BatchTally(batches: (messages.count + 999) / 1000)
        let start = ContinuousClock.now
        for first in stride(from: 0, to: messages.count, by: 1000) {
            try await submit(Array(messages[first..<min(first + 1000, messages.count)])) { tally.completed(failed: $0) }
        }
        await tally.wait()
        let rate = Double(messages.count) / (ContinuousClock.now - start).inSeconds
        guard tally.failed == 0 else {
            throw BenchmarkFailure.badPeerOutput("our \(what) had \(tally.failed) failures")
        }
        return rate
    }

    /// An event-shaped payload like the bridge writes (~450 bytes).
    private static func eventPayload(index: Int, prefix: String) -> (id: String, key: String, payload: [UInt8]) {
        let key = "item-\(index % 1000)"
        let id = "\(prefix)_\(index)"
        let text = """
            {"id":"\(id)","type":"items.update","collection":"articles","event":"update","key":"\(key)",\
            "seq":\(index),"data":{"id":"\(key)","title":"Article \(index)",\
            "body":"\(String(repeating: "lorem ipsum ", count: 22))","tags":["a","b"],"rating":4.5,"draft":null}}
            """
        return (id, key, Array(text.utf8))
    }

    private static func rate(fromPeer output: String) throws -> Double {
        guard let line = output.split(separator: "\n").last,
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let rate = object["messages_per_second"] as? Double, (object["failures"] as? Int) == 0
        else { throw BenchmarkFailure.badPeerOutput(output) }
        return rate
    }
}

/// Batches still to complete and messages that failed, updated from the clients' threads.
final class BatchTally: Sendable {
    private let state: ConditionLock<(remaining: Int, failed: Int)>

    init(batches: Int) { state = ConditionLock((batches, 0)) }

    func completed(failed: Int) {
        state.withLock {
            $0.remaining -= 1
            $0.failed += failed
        }
    }

    var failed: Int { state.withLock { $0.failed } }

    /// Waits (polling every millisecond: the wait is not what is measured) until every batch completed.
    func wait() async {
        while state.withLock({ $0.remaining > 0 }) { try? await Task.sleep(for: .milliseconds(1)) }
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

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}
