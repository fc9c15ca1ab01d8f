import BridgeTestSupport
import Foundation
import Testing

/// One event as a sink stored or received it, in the sink's own order.
struct DeliveredEvent: Equatable {
    var id: String
    var event: String
    var key: String
    var origin: String

    init?(json: [String: Any]) {
        guard let id = json["id"] as? String, let event = json["event"] as? String, let key = json["key"] as? String
        else { return nil }
        self.id = id
        self.event = event
        self.key = key
        origin = json["origin"] as? String ?? ""
    }

    init?(line: String) {
        guard let json = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { return nil }
        self.init(json: json)
    }
}

/// The sink under test with its real peer — an NDJSON file on a named pipe read by a consumer that can stall or
/// dawdle, the scriptable webhook receiver, librdkafka's mock cluster, a nats-server with the stream, a redis-server,
/// mosquitto with a paho-mqtt subscriber, a rabbitmq-server with a bound queue — and the faults each can show: down
/// then back, slow with a small buffer (RabbitMQ has no latency knob: its sink gets the small buffer only).
final class MatrixSinkRig {
    let kind: MatrixCase.Sink
    private let directory: URL
    private var fifoReader: PythonServer?
    private var receiver: WebhookReceiver?
    private var cluster: KafkaMockPeer?
    private var nats: NATSServer?
    private var redis: RedisServer?
    /// Keeps the redis-server busy part of the time (`DEBUG SLEEP`) when the sink is slow.
    private var redisSlowdown: PythonServer?
    private var mosquitto: (broker: MosquittoServer, reader: PythonServer)?
    private var rabbit: RabbitMQServer?
    /// What was taken out of RabbitMQ's queue so far (reading it empties it).
    private var rabbitHeld: [DeliveredEvent] = []

    private static let topic = "directus.articles"
    private var fifo: URL { directory.appendingPathComponent("events.fifo") }
    private var output: URL { directory.appendingPathComponent("events.ndjson") }
    private var pauseFile: URL { directory.appendingPathComponent("consumer.paused") }

    /// Starts the peer; `slow` makes the NDJSON consumer and the webhook receiver dawdle from the start.
    init(_ kind: MatrixCase.Sink, slow: Bool) throws {
        self.kind = kind
        directory = try TestEnvironment.makeTemporaryDirectory(prefix: "matrix-\(kind.rawValue)")
        switch kind {
        case .ndjson:
            try #require(mkfifo(fifo.path, 0o600) == 0, "mkfifo: errno \(errno)")
            fifoReader = try PythonServer(
                script: "sink_peers/fifo_reader.py",
                arguments: [fifo.path, output.path, "--pause-file", pauseFile.path]
                    + (slow ? ["--delay-ms", "2"] : []))
        case .webhook:
            let receiver = try WebhookReceiver()
            if slow { try receiver.script(randomDelayMs: [2, 10]) }
            self.receiver = receiver
        case .kafka:
            let cluster = try KafkaMockPeer(brokers: 1)
            try cluster.createTopic(Self.topic, partitions: 1, replicationFactor: 1)
            if slow { try cluster.setRoundTripTime(broker: 1, milliseconds: 100) }
            self.cluster = cluster
        case .jetstream:
            nats = try EventsStream.singleServer(prefix: "matrix-nats")
        case .redis:
            let redis = try RedisServer(in: directory.appendingPathComponent("redis"), debugCommand: true)
            try redis.start()
            if slow {
                redisSlowdown = try PythonServer(script: "sink_peers/redis_slowdown.py", arguments: [redis.url()])
            }
            self.redis = redis
        case .mqtt:
            let broker = try MosquittoServer(in: directory.appendingPathComponent("mosquitto"))
            try broker.start()
            mosquitto = (broker, try broker.followReader(topic: "directus/#"))
        case .amqp:
            let rabbit = try RabbitMQServer(in: directory.appendingPathComponent("rabbitmq"))
            try rabbit.start()
            try Self.bindMatrixQueue(rabbit)
            self.rabbit = rabbit
        }
    }

    func stop() {
        fifoReader?.stop()
        receiver?.stop()
        nats?.kill()
        redisSlowdown?.stop()
        redis?.kill()
        mosquitto?.reader.stop()
        mosquitto?.broker.kill()
        rabbit?.stop()
    }

    /// The sink's entry under `sinks:` (indented for `webhookConfig`); `small` gives it a small buffer.
    func yaml(small: Bool) -> String {
        switch kind {
        case .ndjson:
            return "  - type: ndjson\n    path: \"\(fifo.path)\"\n"
        case .webhook:
            return webhookSink(
                receiver!.hookURL("/hook"),
                "retry_schedule: [100ms, 200ms]\nmax_attempts: 1000" + (small ? "\nmax_outbox: 20\nmax_in_flight: 4" : ""))
        case .kafka:
            return "  - type: kafka\n    brokers: [\"\(cluster!.bootstrapServers)\"]\n"
                + "    properties:\n      linger.ms: \"5\"\n      max.in.flight.requests.per.connection: \"1\"\n"
                + (small ? "    max_outstanding: 10\n" : "")
        case .jetstream:
            return "  - type: jetstream\n    servers: [\"\(nats!.url)\"]\n    ack_timeout: 1s\n"
                + (small ? "    max_outstanding: 5\n" : "")
        case .redis:
            return "  - type: redis\n    url: \(redis!.url())\n" + (small ? "    max_in_flight: 5\n" : "")
        case .mqtt:
            return "  - type: mqtt\n    url: \(mosquitto!.broker.url())\n" + (small ? "    max_in_flight: 5\n" : "")
        case .amqp:
            return "  - type: amqp\n    url: \(rabbit!.url())\n" + (small ? "    max_in_flight: 5\n" : "")
        }
    }

    /// The sink stops taking events (consumer stalled, receiver refusing connections, broker or server down).
    func down() throws {
        switch kind {
        case .ndjson: FileManager.default.createFile(atPath: pauseFile.path, contents: nil)
        case .webhook: try receiver!.down()
        case .kafka: try cluster!.setBrokerDown(1)
        case .jetstream: nats!.kill()
        case .redis: redis!.kill()
        case .mqtt: mosquitto!.broker.stop()
        case .amqp: rabbit!.stop()
        }
    }

    /// The sink takes events again.
    func up() throws {
        switch kind {
        case .ndjson: try FileManager.default.removeItem(at: pauseFile)
        case .webhook: try receiver!.up()
        case .kafka: try cluster!.setBrokerUp(1)
        case .jetstream: try nats!.start()
        case .redis: try redis!.start()
        case .mqtt: try mosquitto!.broker.start()
        case .amqp:
            try rabbit!.start()
            // The setup again (declares and a bind are idempotent), as at the start: RabbitMQ 3.10 once came back from
            // a crash with its exchange and queue but without the binding's route, and every publish was then a
            // dead letter (docs/RELIABILITY.md, "RabbitMQ back from a crash without a binding's route"). The bridge
            // is right to dead-letter those, and this point is about the sink being down, not the broker's recovery.
            try Self.bindMatrixQueue(rabbit!)
        }
    }

    /// The sink's exchange and the `matrix` queue bound to all of it (idempotent).
    private static func bindMatrixQueue(_ rabbit: RabbitMQServer) throws {
        try AMQPAdmin.run(["setup", rabbit.url(), "directus", "matrix", "#"])
    }

    /// Every event the sink holds, in its order, once `complete` says that is all that is due or `timeout` seconds
    /// (stretched by the test patience) passed. Counting alone would not do: a snapshot may also hold items created
    /// after its watermark, so a count can be reached while lines are still on their way.
    func delivered(timeout: TimeInterval, until complete: ([DeliveredEvent]) -> Bool) -> [DeliveredEvent] {
        let deadline = Date().addingTimeInterval(TestEnvironment.patient(timeout))
        var events = held()
        while !complete(events) && Date() < deadline {
            // Reading a broker starts a Python process: less often than the receiver or the file.
            usleep(kind == .kafka || kind == .jetstream || kind == .redis || kind == .amqp ? 1_000_000 : 200_000)
            events = held()
        }
        return events
    }

    /// What the sink holds now: the NDJSON consumer wrote, the receiver answered 2xx, the topic or the stream has.
    private func held() -> [DeliveredEvent] {
        if let receiver { return ((try? receiver.delivered()) ?? []).compactMap { DeliveredEvent(json: $0.json) } }
        if let cluster {
            // What the topic holds now: the reader stops once nothing more came for a second.
            let read = try? KafkaTopicReader.read(
                servers: cluster.bootstrapServers, topic: Self.topic, expected: Int.max, timeout: 30, idle: 1)
            return (read?.messages ?? []).compactMap { DeliveredEvent(line: $0.value) }
        }
        if let nats { return EventsStream.read([nats]).compactMap { DeliveredEvent(json: $0.event) } }
        if let redis {
            let entries = (try? redis.readStream(Self.topic)) ?? []
            return entries.compactMap { $0.fields["payload"].flatMap(DeliveredEvent.init(line:)) }
        }
        if let mosquitto {
            // QoS 1 from the broker to the subscriber: after a broker restart it sends again what the subscriber had
            // not acknowledged, copies that cannot be told from a resend of the bridge's (QoS 1 is at least once
            // both ways, docs/configuration.md): the first of each id counts.
            var seen = Set<String>()
            return receivedMQTTMessages(mosquitto.reader).compactMap { DeliveredEvent(line: $0.payload) }
                .filter { seen.insert($0.id).inserted }
        }
        if let rabbit {
            rabbitHeld += ((try? AMQPAdmin.read(rabbit, "matrix")) ?? []).compactMap { DeliveredEvent(line: $0.body) }
            return rabbitHeld
        }
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        // A line being written has no newline yet: only whole lines count.
        return text.split(separator: "\n", omittingEmptySubsequences: true).dropLast(text.hasSuffix("\n") ? 0 : 1)
            .compactMap { DeliveredEvent(line: String($0)) }
    }
}
