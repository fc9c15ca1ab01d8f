import BridgeTestSupport
import Foundation
import Testing

/// The RabbitMQ node the AMQP sink tests share (RabbitMQ starts slowly); each test has its own exchange and queue.
private let sharedRabbitMQ: Result<RabbitMQServer, any Error> = Result {
    let broker = try RabbitMQServer(in: try TestEnvironment.makeTemporaryDirectory(prefix: "amqp-sink"), tls: true)
    try broker.start()
    return broker
}

/// The real binary with a `type: amqp` sink against Debian's rabbitmq-server, read back with pika: every change
/// published once as a persistent message with its id and headers, in order per item; an unroutable message is a
/// dead letter (`dlq list --sink`, `dlq replay` once a queue is bound); a broker restart loses nothing; credentials
/// refused after the start are reported and recovered from; `check` and `--send-test-event`; CloudEvents; TLS.
/// Serialized: one test restarts the shared node.
@Suite(.serialized, .timeLimit(.minutes(10))) struct AMQPSinkTests {
    /// An NDJSON sink on stdout (to compare bodies), then an amqp sink named `queue` publishing to `exchange`, with
    /// `extra` keys.
    func sinks(_ url: String, exchange: String, _ extra: String = "") -> String {
        "  - type: ndjson\n    path: \"-\"\n" + amqpSink(url, exchange: exchange, extra)
    }

    @Test func everyChangeIsPublishedOnceInOrderWithItsHeaders() throws {
        let broker = try sharedRabbitMQ.get()
        try AMQPAdmin.run(["setup", broker.url(), "events-order", "queue-order", "articles.#"])
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: sinks(broker.url(), exchange: "events-order"))
        )
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")

        let keys = try emulator.createArticles(20, title: "amqp")
        try emulator.updateArticles(Array(keys.prefix(5)), round: 1)
        try emulator.rest("DELETE", "/items/articles/\(keys[19])")
        let messages = try waitForMessages(broker, "queue-order", count: 26)
        #expect(messages.count == 26, "\(bridge.stderr.suffix(3000))")
        #expect(Set(messages.map(\.message_id)).count == 26, "an event published twice")
        #expect(bridge.waitUntil { $0.lines.count >= 26 })
        #expect(Set(messages.map(\.body)) == Set(bridge.lines))
        for message in messages {
            let event = try #require(
                try JSONSerialization.jsonObject(with: Data(message.body.utf8)) as? [String: Any]
            )
            let kind = event["event"] as? String ?? ""
            #expect(message.message_id == event["id"] as? String)
            #expect(message.content_type == "application/json" && message.delivery_mode == 2)
            #expect(message.routing_key == "articles.\(kind)")
            #expect(
                message.headers == [
                    "type": event["type"] as? String ?? "", "collection": "articles",
                    "key": "\(event["key"] ?? "")", "event": kind,
                ]
            )
        }
        // Per item, in the order the changes were made: the creation before the update.
        for key in keys.prefix(5) {
            let kinds = messages.filter { $0.headers["key"] == key }.compactMap { $0.headers["event"] }
            #expect(kinds == ["create", "update"], "item \(key): \(kinds)")
        }
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    /// `format: cloudevents`: the body is the CloudEvent; `message_id` and the headers still carry the event's own id
    /// and type.
    @Test func cloudEventsFormatPutsTheCloudEventInTheBody() throws {
        let broker = try sharedRabbitMQ.get()
        try AMQPAdmin.run(["setup", broker.url(), "events-ce", "queue-ce", "#"])
        let emulator = try Emulator()
        defer { emulator.stop() }
        let entry = amqpSink(broker.url(), exchange: "events-ce", "format: cloudevents")
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url, sinks: entry, mode: "activity"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let keys = try emulator.createArticles(3, title: "cloud")
        let messages = try waitForMessages(broker, "queue-ce", count: 3)
        #expect(messages.count == 3, "\(bridge.stderr.suffix(2000))")
        for message in messages {
            let event = try #require(
                try JSONSerialization.jsonObject(with: Data(message.body.utf8)) as? [String: Any]
            )
            #expect(event["specversion"] as? String == "1.0" && event["id"] as? String == message.message_id)
            #expect(event["type"] as? String == message.headers["type"])
            #expect(message.headers["type"] == "directus.items.create" && keys.contains(message.headers["key"] ?? ""))
        }
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    /// No queue is bound for the routing key: the broker returns the message (mandatory), and the sink keeps it as a
    /// dead letter instead of losing it; once a queue is bound, `dlq replay` delivers it under its event id.
    @Test func anUnroutableMessageIsADeadLetterAndIsReplayedOnceAQueueIsBound() throws {
        let broker = try sharedRabbitMQ.get()
        try AMQPAdmin.run(["setup", broker.url(), "events-dlq", "queue-dlq", "nothing.#"])
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: webhookConfig(
                url: emulator.url,
                sinks: sinks(broker.url(), exchange: "events-dlq"),
                operations: true,
                mode: "activity"
            )
        )
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let key = try #require(try emulator.createArticles(1, title: "unroutable").first)
        #expect(bridge.waitForLog("stored as a dead letter", timeout: 30), "\(bridge.stderr.suffix(2000))")
        let (listStatus, listed, listErrors) = try dlq(["list", "--json", "--sink", "queue"], in: bridge.directory)
        #expect(listStatus == 0 && listed.count == 1, "\(listed) \(listErrors)")
        let letter = try #require(
            listed.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        )
        #expect(letter["key"] as? String == key && letter["sink"] as? String == "queue", "\(letter)")
        #expect((letter["reason"] as? String)?.contains("unroutable") == true, "\(letter)")
        // The NDJSON sink beside it was not held back.
        #expect(bridge.waitUntil { $0.lines.count >= 1 }, "\(bridge.stderr.suffix(2000))")

        // The operator binds a queue for the collection; the replayed event arrives under its event id.
        try AMQPAdmin.run(["setup", broker.url(), "events-dlq", "queue-dlq", "articles.#"])
        let (replayStatus, _, replayErrors) = try dlq(["replay", "--sink", "queue"], in: bridge.directory)
        #expect(replayStatus == 0, "\(replayErrors)")
        let messages = try waitForMessages(broker, "queue-dlq", count: 1)
        #expect(messages.count == 1 && messages.first?.message_id == letter["id"] as? String, "\(messages)")
        #expect(messages.first?.headers["key"] == key)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    /// The exchange does not exist when the bridge starts: the sink says so at error level and waits at its cursor;
    /// once an operator declares it, the change made meanwhile arrives. (Declaring the exchange and binding its queue
    /// are two steps: a publish between them is unroutable, a dead letter that the operator replays.)
    @Test func aMissingExchangeIsReportedAndWaitedFor() throws {
        let broker = try sharedRabbitMQ.get()
        let emulator = try Emulator()
        defer { emulator.stop() }
        let entry = sinks(broker.url(), exchange: "events-late")
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url, sinks: entry, mode: "activity"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.createArticles(1, title: "early")
        #expect(bridge.waitForLog("no exchange 'events-late'", timeout: 60), "\(bridge.stderr.suffix(2000))")
        let setup = ["setup", broker.url(), "events-late", "queue-late", "#"]
        try AMQPAdmin.run(setup)
        #expect(bridge.waitUntil { $0.lines.count == 1 }, "\(bridge.stderr.suffix(2000))")
        let ids = Set(bridge.eventIDs)
        let messages = try waitForMessagesOrReplay(ids, broker, "queue-late", bridge: bridge, setup: setup)
        #expect(messages.map(\.message_id) == Array(ids), "\(bridge.stderr.suffix(2000))")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    /// The queue is full (`x-max-length` with `reject-publish`): the broker nacks what does not fit, and the sink sends
    /// it again, before anything newer, until the consumer made room; nothing is lost or dead-lettered.
    @Test func nackedMessagesAreSentAgainUntilTheBrokerTakesThem() throws {
        let broker = try sharedRabbitMQ.get()
        try AMQPAdmin.run(["setup", broker.url(), "events-nack", "queue-nack", "#", "--max-length", "3"])
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: webhookConfig(
                url: emulator.url,
                sinks: sinks(broker.url(), exchange: "events-nack"),
                operations: true,
                mode: "activity"
            )
        )
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.createArticles(8, title: "full")
        #expect(bridge.waitForLog("nacked", timeout: 30), "\(bridge.stderr.suffix(2000))")
        // The consumer takes what the queue holds, again and again: the nacked messages follow as room frees up.
        let messages = try waitForMessages(broker, "queue-nack", count: 8)
        let ids = messages.map(\.message_id)
        #expect(Set(ids).count == 8, "\(ids) \(bridge.stderr.suffix(2000))")
        #expect(bridge.stderr.contains("sending events again"))
        let (_, listed, _) = try dlq(["list", "--json", "--sink", "queue"], in: bridge.directory)
        #expect(listed.isEmpty, "\(listed)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    /// The sink's user gets another password under a running bridge and its connection is closed: the reconnection
    /// is refused (error log, `/readyz` 503 naming the sink after the stuck threshold); once the password is back,
    /// the waiting event arrives and the bridge is ready again.
    @Test func credentialsRefusedAfterTheStartAreReportedAndRecoveredFrom() throws {
        let broker = try sharedRabbitMQ.get()
        try rabbitmqctl(broker, ["add_user", "bridge-auth", "right-pw-123"])
        try rabbitmqctl(broker, ["set_permissions", "-p", "/", "bridge-auth", ".*", ".*", ".*"])
        try AMQPAdmin.run(["setup", broker.url(), "events-auth", "queue-auth", "#"])
        let emulator = try Emulator()
        defer { emulator.stop() }
        let entry = amqpSink(broker.url(credentials: "bridge-auth:right-pw-123"), exchange: "events-auth")
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: entry, operations: true, mode: "activity")
        )
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.createArticles(2, title: "before")
        var messages = try waitForMessages(broker, "queue-auth", count: 2)
        #expect(messages.count == 2, "\(bridge.stderr.suffix(2000))")

        try rabbitmqctl(broker, ["change_password", "bridge-auth", "other-pw-456"])
        try rabbitmqctl(broker, ["close_all_connections", "password changed by the test"])
        try emulator.createArticles(1, title: "refused")
        #expect(bridge.waitForLog("refused the credentials", timeout: 60), "\(bridge.stderr.suffix(2000))")
        #expect(
            bridge.waitUntil(timeout: 90) { _ in
                guard let answer = try? HTTPFetch.get(base + "/readyz") else { return false }
                return answer.status == 503 && String(decoding: answer.body, as: UTF8.self).contains("queue")
            },
            "\(bridge.stderr.suffix(2000))"
        )
        #expect(!bridge.stderr.contains("right-pw-123"))

        try rabbitmqctl(broker, ["change_password", "bridge-auth", "right-pw-123"])
        messages += try waitForMessages(broker, "queue-auth", count: 1)
        #expect(messages.count == 3, "\(bridge.stderr.suffix(2000))")
        #expect(
            bridge.waitUntil(timeout: 90) { _ in (try? HTTPFetch.get(base + "/readyz"))?.status == 200 },
            "\(bridge.stderr.suffix(2000))"
        )
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit(timeout: 30) == 0, "\(bridge.stderr.suffix(2000))")
    }

    /// `amqps://` with the broker's CA in `ca_file` (by host name: librabbitmq checks DNS names only).
    @Test func tlsWithTheBrokersCAFile() throws {
        let broker = try sharedRabbitMQ.get()
        let ca = try #require(broker.certificates?.ca)
        try AMQPAdmin.run(["setup", broker.url(), "events-tls", "queue-tls", "#"])
        let emulator = try Emulator()
        defer { emulator.stop() }
        let url = broker.url(tls: true).replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let entry = amqpSink(url, exchange: "events-tls", "ca_file: \(ca)")
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url, sinks: entry, mode: "activity"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.createArticles(3, title: "tls")
        #expect(try waitForMessages(broker, "queue-tls", count: 3).count == 3, "\(bridge.stderr.suffix(2000))")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    @Test func checkFindsTheExchangeAndPublishesATestEvent() throws {
        let broker = try sharedRabbitMQ.get()
        try AMQPAdmin.run(["setup", broker.url(), "events-check", "queue-check", "articles.#"])
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "amqp-check-run")
        func check(_ url: String, exchange: String, _ arguments: [String] = []) throws -> (code: Int32?, line: String) {
            try webhookConfig(url: emulator.url, sinks: sinks(url, exchange: exchange))
                .write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
            let run = try BridgeProcess(
                arguments: ["check", "--config", "bridge.yaml"] + arguments,
                directory: directory
            )
            let code = run.waitForExit(timeout: 60)
            return (code, run.lines.first { $0.contains("amqp queue amqp://") } ?? "missing: \(run.lines)")
        }
        let found = try check(broker.url(), exchange: "events-check")
        #expect(
            found.code == 0 && found.line.hasPrefix("ok   ") && found.line.contains("exchange events-check exists"),
            "\(found.line)"
        )
        let sent = try check(broker.url(), exchange: "events-check", ["--send-test-event"])
        #expect(
            sent.code == 0 && sent.line.contains("confirmed") && sent.line.contains("articles.test"),
            "\(sent.line)"
        )
        let messages = try AMQPAdmin.read(broker, "queue-check")
        #expect(messages.count == 1 && messages.first?.message_id.hasPrefix("evt_test_") == true, "\(messages)")
        #expect(messages.first?.headers["type"] == "directus.bridge.test")
        // A full queue nacks the test event: the remedy is the queue, not the user's permission (said before).
        try AMQPAdmin.run(["setup", broker.url(), "events-full", "queue-full", "articles.#", "--max-length", "1"])
        _ = try check(broker.url(), exchange: "events-full", ["--send-test-event"])
        let nacked = try check(broker.url(), exchange: "events-full", ["--send-test-event"])
        #expect(
            nacked.code == 1 && nacked.line.contains("nacked") && nacked.line.contains("reject-publish")
                && !nacked.line.contains("permission"),
            "\(nacked.line)"
        )

        let missing = try check(broker.url(), exchange: "never-declared")
        #expect(
            missing.code == 1 && missing.line.hasPrefix("FAIL ") && missing.line.contains("404")
                && missing.line.contains("declare it"),
            "\(missing.line)"
        )
        let refused = try check(broker.url(credentials: "guest:wrong-pw"), exchange: "events-check")
        #expect(refused.code == 1 && refused.line.contains("refused the credentials"), "\(refused.line)")
        #expect(!refused.line.contains("wrong-pw"))
        let noVhost = try check(broker.url() + "/no-such-vhost", exchange: "events-check")
        #expect(noVhost.code == 1 && noVhost.line.contains("no-such-vhost"), "\(noVhost.line)")
        let down = try check("amqp://127.0.0.1:\(try freeLoopbackPort())", exchange: "events-check")
        #expect(down.code == 1 && down.line.hasPrefix("FAIL ") && down.line.contains("cannot connect"), "\(down.line)")
    }

    /// A broker that hangs (SIGSTOP of the Erlang VM: the connection stays open, nothing is read or confirmed) for
    /// longer than the sink's confirm timeout (10 s) and shorter than two heartbeats (60 s), then runs on: the
    /// publishes waiting in the connection's socket are the broker's to store, so the sink keeps the connection and
    /// waits for their confirms, and each event is stored once.
    @Test func aHungBrokerGetsEachEventOnce() throws {
        let broker = try sharedRabbitMQ.get()
        try AMQPAdmin.run(["setup", broker.url(), "events-hung", "queue-hung", "#"])
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: webhookConfig(
                url: emulator.url,
                sinks: "  - type: ndjson\n    path: \"-\"\n" + amqpSink(broker.url(), exchange: "events-hung"),
                mode: "activity"
            )
        )
        defer { broker.resume() }
        #expect(bridge.waitForLog("reading the activity log", timeout: 20), "\(bridge.stderr)")
        try emulator.createArticles(5, title: "before")
        var messages = try waitForMessages(broker, "queue-hung", count: 5)
        #expect(messages.count == 5, "\(bridge.stderr.suffix(2000))")
        broker.pause()
        try emulator.createArticles(10, title: "while hung")
        #expect(bridge.waitUntil(timeout: 30) { $0.lines.count >= 15 }, "the NDJSON sink stalled: \(bridge.stderr)")
        sleep(25)  // two confirm timeouts and a half, within two heartbeats
        broker.resume()
        messages += try waitForMessages(broker, "queue-hung", count: 10)
        sleep(3)  // what would come more than once
        messages += try AMQPAdmin.read(broker, "queue-hung")
        let ids = messages.map(\.message_id)
        #expect(Set(ids).count == 15, "\(Set(ids).count) distinct events: \(bridge.stderr.suffix(3000))")
        #expect(ids.count == 15, "\(ids.count) messages for 15 events: \(bridge.stderr.suffix(3000))")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit(timeout: 30) == 0, "\(bridge.stderr.suffix(2000))")
    }

    /// The suite's node is killed (SIGKILL) while changes happen and started again: every change reaches the durable
    /// queue (a message published but not confirmed before the crash may come twice, with the same id).
    ///
    /// RabbitMQ 3.10 can come back from a crash without the route of a durable binding (a loaded CI machine saw every
    /// change after the restart returned as unroutable). That is the broker's loss, and the bridge must not make it
    /// a silent one: each change is in the queue or a dead letter, and once the queue is bound again `dlq replay`
    /// brings the dead letters to it.
    @Test func aBrokerRestartMidStreamLosesNothing() throws {
        let broker = try sharedRabbitMQ.get()
        let setup = ["setup", broker.url(), "events-restart", "queue-restart", "#"]
        try AMQPAdmin.run(setup)
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: webhookConfig(
                url: emulator.url,
                sinks: sinks(broker.url(), exchange: "events-restart"),
                mode: "activity"
            )
        )
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.createArticles(20, title: "before")
        var messages = try waitForMessages(broker, "queue-restart", count: 5)
        broker.stop()
        try emulator.createArticles(20, title: "during")
        #expect(bridge.waitUntil(timeout: 30) { $0.lines.count >= 40 }, "\(bridge.stderr.suffix(2000))")
        try broker.start()
        try emulator.createArticles(10, title: "after")
        #expect(bridge.waitUntil(timeout: 30) { $0.lines.count >= 50 }, "\(bridge.stderr.suffix(2000))")
        let expected = Set(bridge.eventIDs)
        messages += try waitForMessagesOrReplay(
            expected.subtracting(messages.map(\.message_id)), broker, "queue-restart", bridge: bridge, setup: setup,
            seconds: 90
        )
        let missing = expected.subtracting(messages.map(\.message_id))
        #expect(
            expected.count == 50 && missing.isEmpty,
            "missing \(missing.sorted()) \(bridge.stderr.suffix(3000))\nbroker: \(broker.log)"
        )
        #expect(bridge.stderr.contains("sending events again"), "the restart was never noticed")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit(timeout: 30) == 0, "\(bridge.stderr.suffix(2000))")
    }
}

/// A peer that is no broker (Tests/tools/broker_peers/hostile_server.py) in place of RabbitMQ: it accepts and never
/// answers, or answers with garbage or a frame announcing 2 GB. The bridge neither hangs nor grows, the NDJSON sink
/// beside it keeps flowing, and SIGTERM ends it in time.
@Suite(.serialized, .timeLimit(.minutes(10))) struct AMQPSinkHostileBrokerTests {
    @Test(arguments: ["silent", "amqp-garbage", "amqp-oversized"])
    func aHostileBrokerHoldsBackNothingElse(mode: String) throws {
        let hostile = try PythonServer(script: "broker_peers/hostile_server.py", arguments: [mode])
        defer { hostile.stop() }
        let emulator = try Emulator()
        defer { emulator.stop() }
        let sinks =
            "  - type: ndjson\n    path: \"-\"\n"
            + amqpSink("amqp://127.0.0.1:\(hostile.port)", exchange: "events", "max_in_flight: 10")
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: sinks, operations: true, mode: "activity")
        )
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.createArticles(5, title: "first")
        #expect(bridge.waitUntil(timeout: 30) { $0.lines.count >= 5 }, "\(bridge.stderr.suffix(2000))")
        let steady = try #require(bridge.peakResidentBytes)
        // Several connection attempts, each failing, while the other sink takes more changes.
        #expect(bridge.waitForLog("amqp retriable error", timeout: 60), "\(bridge.stderr.suffix(2000))")
        try emulator.createArticles(200, title: "more")
        #expect(bridge.waitUntil(timeout: 60) { $0.lines.count >= 205 }, "\(bridge.stderr.suffix(2000))")
        let peak = try #require(bridge.peakResidentBytes)
        #expect(peak - steady <= 32 << 20, "\(mode): peak \(peak >> 20) MiB, steady \(steady >> 20) MiB")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit(timeout: 30) != nil, "the bridge hung at shutdown: \(bridge.stderr.suffix(2000))")
    }
}

/// One amqp sink entry named `queue` (indented for `webhookConfig`) with `extra` keys.
func amqpSink(_ url: String, exchange: String, _ extra: String = "") -> String {
    "  - type: amqp\n    name: queue\n    url: \(url)\n    exchange: \(exchange)\n"
        + extra.split(separator: "\n").map { "    \($0)\n" }.joined()
}

/// Takes messages out of `queue` until `count` came or 60 s (stretched) passed; returns them.
func waitForMessages(_ broker: RabbitMQServer, _ queue: String, count: Int) throws -> [AMQPAdmin.Message] {
    let deadline = Date().addingTimeInterval(TestEnvironment.patient(60))
    var messages = try AMQPAdmin.read(broker, queue)
    while messages.count < count && Date() < deadline {
        usleep(300_000)
        messages += try AMQPAdmin.read(broker, queue)
    }
    return messages
}

/// Takes messages out of `queue` until each of `ids` came or is a dead letter of the `queue` sink (`seconds`,
/// stretched). Dead letters are then replayed, after `setup` ran again (the operator binds the queue), and read too.
/// Returns every message read.
func waitForMessagesOrReplay(
    _ ids: Set<String>, _ broker: RabbitMQServer, _ queue: String, bridge: BridgeProcess, setup: [String],
    seconds: TimeInterval = 60
) throws -> [AMQPAdmin.Message] {
    var messages: [AMQPAdmin.Message] = []
    var letters = Set<String>()
    var deadline = Date().addingTimeInterval(TestEnvironment.patient(seconds))
    while !ids.isSubset(of: Set(messages.map(\.message_id)).union(letters)) && Date() < deadline {
        let read = try AMQPAdmin.read(broker, queue)
        messages += read
        // The dead letters are asked for (a bridge process each time) only when the queue brought nothing new.
        if read.isEmpty { letters = try deadLetterIDs(of: "queue", in: bridge.directory) }
        usleep(300_000)
    }
    guard !letters.isEmpty else { return messages }
    print("\(queue): \(letters.count) event(s) came back unroutable; bound again and replayed")
    try AMQPAdmin.run(setup)
    let (status, _, errors) = try dlq(["replay", "--sink", "queue"], in: bridge.directory)
    guard status == 0 else { throw BrokerServerError.exited(name: "dlq replay", log: errors) }
    deadline = Date().addingTimeInterval(TestEnvironment.patient(seconds))
    while !ids.isSubset(of: Set(messages.map(\.message_id))) && Date() < deadline {
        messages += try AMQPAdmin.read(broker, queue)
        usleep(300_000)
    }
    return messages
}

/// The event ids of `sink`'s dead letters (`dlq list --json`).
func deadLetterIDs(of sink: String, in directory: URL) throws -> Set<String> {
    let (status, listed, errors) = try dlq(["list", "--json", "--sink", sink], in: directory)
    guard status == 0 else { throw BrokerServerError.exited(name: "dlq list", log: errors) }
    return Set(
        listed.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["id"] as? String })
}
