import BridgeTestSupport
import Foundation
import Testing

/// The real binary with a `type: kafka` sink against librdkafka's mock cluster (3 brokers on loopback TCP, in a
/// helper process), read back with confluent-kafka: value = the event line, key = the item key, headers, per-item
/// order within a partition, nothing missing or twice — across a broker down, leader changes and injected produce
/// errors; an unreachable cluster shows in the log and in `/readyz`.
@Suite(.serialized, .timeLimit(.minutes(10))) struct KafkaSinkTests {
    static let topic = "directus.articles"

    /// An NDJSON sink on stdout (to compare values) and a kafka sink on `servers`.
    func sinks(_ servers: String, _ extra: String = "") -> String {
        let brokers = servers.split(separator: ",").map { "\"\($0)\"" }.joined(separator: ", ")
        return "  - type: ndjson\n    path: \"-\"\n  - type: kafka\n    brokers: [\(brokers)]\n"
            // One request in flight: librdkafka 2.0.2's mock stores a later batch while an earlier one failed, so
            // injected errors could make a batch count as delivered that it never stored (BridgeKafkaTests, mockSafe).
            + "    properties:\n      linger.ms: \"5\"\n      max.in.flight.requests.per.connection: \"1\"\n"
            + extra.split(separator: "\n").map { "    \($0)\n" }.joined()
    }

    /// A one-broker cluster with the topic (one partition), an emulator (the caller stops it) and an activity-mode
    /// bridge with the NDJSON and kafka sinks, connected.
    func oneBrokerActivityBridge() throws -> (KafkaMockPeer, Emulator, BridgeProcess) {
        let cluster = try KafkaMockPeer(brokers: 1)
        try cluster.createTopic(Self.topic, partitions: 1, replicationFactor: 1)
        let emulator = try Emulator()
        let bridge: BridgeProcess
        do {
            bridge = try BridgeProcess.run(
                config: webhookConfig(url: emulator.url, sinks: sinks(cluster.bootstrapServers), mode: "activity"))
        } catch {
            emulator.stop()
            throw error
        }
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        return (cluster, emulator, bridge)
    }

    func read(_ cluster: KafkaMockPeer, expected: Int) throws -> [KafkaReadMessage] {
        let read = try KafkaTopicReader.read(servers: cluster.bootstrapServers, topic: Self.topic, expected: expected)
        if let problem = read.problem { Issue.record(Comment(rawValue: problem)) }
        return read.messages
    }

    /// Every event of `bridge`'s NDJSON lines once in the topic (the very bytes of its line with `sameBytes`: in live
    /// mode every sink gets the same bytes, in activity mode each sink reads the log on its own), keyed by its item,
    /// with its headers; offsets grow per partition and each item's events come in order (activity order, or for
    /// live events the order of the lines).
    func expectEveryLineOnce(
        _ read: [KafkaReadMessage], lines: [String], sameBytes: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        func id(_ text: String) -> String {
            ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any])?["id"] as? String ?? ""
        }
        let lineIDs = lines.map(id)
        let position = Dictionary(lineIDs.enumerated().map { ($1, $0) }) { first, _ in first }
        #expect(read.count == lines.count, "read \(read.count) of \(lines.count)", sourceLocation: sourceLocation)
        #expect(Set(read.map { id($0.value) }) == Set(lineIDs), sourceLocation: sourceLocation)
        if sameBytes { #expect(Set(read.map(\.value)) == Set(lines), sourceLocation: sourceLocation) }
        #expect(Set(read.map { id($0.value) }).count == read.count, "read twice", sourceLocation: sourceLocation)
        var lastOffset: [Int: Int] = [:]
        var lastSeq: [String: Int] = [:]
        var partitionOf: [String: Int] = [:]
        for message in read {
            let event = (try? JSONSerialization.jsonObject(with: Data(message.value.utf8))) as? [String: Any] ?? [:]
            let key = "\(event["key"] ?? "")"
            #expect(message.key == key, sourceLocation: sourceLocation)
            let kind = event["event"] as? String ?? ""
            #expect(
                message.headers == [
                    ["id", event["id"] as? String ?? ""], ["type", "directus.items.\(kind)"],
                    ["collection", "articles"], ["event", kind],
                ],
                sourceLocation: sourceLocation)
            #expect(message.offset > lastOffset[message.partition, default: -1], sourceLocation: sourceLocation)
            lastOffset[message.partition] = message.offset
            #expect(partitionOf[key, default: message.partition] == message.partition, sourceLocation: sourceLocation)
            partitionOf[key] = message.partition
            let seq = event["seq"] as? Int ?? position[event["id"] as? String ?? ""] ?? -1
            #expect(seq > lastSeq[key, default: -1], "item \(key) out of order", sourceLocation: sourceLocation)
            lastSeq[key] = seq
        }
    }

    @Test func everyChangeIsDeliveredWithItsKeyHeadersAndLine() throws {
        let cluster = try KafkaMockPeer(brokers: 3)
        try cluster.createTopic(Self.topic, partitions: 4, replicationFactor: 3)
        let emulator = try Emulator()
        defer { emulator.stop() }
        // Live mode: every sink gets the very bytes of each event.
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: sinks(cluster.bootstrapServers), mode: "live"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let keys = try emulator.createArticles(30, title: "kafka")
        try emulator.updateArticles(Array(keys.prefix(10)), round: 1)
        try emulator.updateArticles(Array(keys.prefix(10)), round: 2)
        for key in keys.suffix(3) { try emulator.rest("DELETE", "/items/articles/\(key)") }
        #expect(bridge.waitUntil(timeout: 30) { $0.lines.count >= 53 }, "\(bridge.stderr.suffix(2000))")
        expectEveryLineOnce(try read(cluster, expected: 53), lines: bridge.lines, sameBytes: true)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    @Test func aBrokerDownLeaderChangesAndProduceErrorsLoseNothing() throws {
        let cluster = try KafkaMockPeer(brokers: 3)
        try cluster.createTopic(Self.topic, partitions: 3, replicationFactor: 3)
        for partition in Int32(0)..<3 {
            try cluster.setLeader(topic: Self.topic, partition: partition, broker: partition + 1)
        }
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: sinks(cluster.bootstrapServers), mode: "activity"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        var keys = try emulator.createArticles(30, title: "before")
        #expect(bridge.waitUntil(timeout: 30) { $0.lines.count >= 30 })

        // Broker 1 (leader of partition 0) goes down while changes keep coming: its partition's events wait.
        try cluster.setBrokerDown(1)
        keys += try emulator.createArticles(30, title: "broker down")
        try emulator.updateArticles(Array(keys.prefix(15)), round: 1)
        sleep(2)
        try cluster.setBrokerUp(1)
        // Every leader moves, and the next produce requests fail with retriable errors.
        for partition in Int32(0)..<3 {
            try cluster.setLeader(topic: Self.topic, partition: partition, broker: (partition + 1) % 3 + 1)
        }
        try cluster.failNextProduceRequests(with: [6, 7, 19, 19, 6])  // not leader, timed out, not enough replicas
        try emulator.updateArticles(Array(keys.suffix(20)), round: 2)
        keys += try emulator.createArticles(20, title: "after")
        let expected = 30 + 30 + 15 + 20 + 20
        #expect(bridge.waitUntil(timeout: 30) { $0.lines.count >= expected }, "\(bridge.stderr.suffix(2000))")
        expectEveryLineOnce(try read(cluster, expected: expected), lines: bridge.lines)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    @Test func refusedAuthorizationIsLoggedAndTheEventsAreSentAgain() throws {
        let (cluster, emulator, bridge) = try oneBrokerActivityBridge()
        defer { emulator.stop() }
        try emulator.createArticles(5, title: "allowed")
        #expect(bridge.waitUntil(timeout: 30) { $0.lines.count >= 5 })
        // The principal loses write access to the topic for two produce requests (TOPIC_AUTHORIZATION_FAILED).
        try cluster.failNextProduceRequests(with: [29, 29])
        try emulator.createArticles(5, title: "refused, then allowed")
        #expect(bridge.waitForLog("sending events again", timeout: 30), "\(bridge.stderr.suffix(2000))")
        let line = bridge.stderr.split(separator: "\n").first { $0.contains("sending events again") } ?? ""
        #expect(line.contains("ERROR") && line.contains("ACLs"), "\(line)")
        #expect(bridge.waitUntil(timeout: 30) { $0.lines.count >= 10 })
        expectEveryLineOnce(try read(cluster, expected: 10), lines: bridge.lines)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    @Test func anEventTheClusterRefusesIsADeadLetterAndReplayedWithItsID() throws {
        let (cluster, emulator, bridge) = try oneBrokerActivityBridge()
        defer { emulator.stop() }
        try emulator.createArticles(2, title: "before")
        #expect(bridge.waitUntil(timeout: 30) { $0.lines.count >= 2 })
        #expect(try read(cluster, expected: 2).count == 2)
        // The next produce request is refused for good (MESSAGE_TOO_LARGE, as a broker's message.max.bytes does).
        try cluster.failNextProduceRequests(with: [10])
        let refusedKey = try #require(try emulator.createArticles(1, title: "refused").first)
        #expect(bridge.waitForLog("stored as a dead letter", timeout: 30), "\(bridge.stderr.suffix(2000))")
        let line = bridge.stderr.split(separator: "\n").first { $0.contains("stored as a dead letter") }
        #expect(line?.contains(" ERROR ") == true, "the level of a webhook's dead letter too: \(line ?? "")")
        try emulator.createArticles(2, title: "after")
        #expect(bridge.waitUntil(timeout: 30) { $0.lines.count >= 5 })
        #expect(try read(cluster, expected: 4).count == 4, "\(bridge.stderr.suffix(2000))")
        let (_, listed, listErrors) = try dlq(["list", "--json"], in: bridge.directory)
        #expect(listed.count == 1, "\(listed) \(listErrors)")
        let letter = try #require(
            listed.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        let letterID = try #require(letter["id"] as? String)
        #expect(letter["key"] as? String == refusedKey && (letter["sink"] as? String)?.contains("kafka") == true)
        // Replayed, the running bridge produces it with its id header and the same value as its NDJSON line.
        let (replayStatus, _, replayErrors) = try dlq(["replay"], in: bridge.directory)
        #expect(replayStatus == 0, "\(replayErrors)")
        #expect(bridge.waitForLog("replayed dead letters delivered", timeout: 30), "\(bridge.stderr.suffix(2000))")
        expectEveryLineOnce(try read(cluster, expected: 5), lines: bridge.lines)
        let (_, afterwards, _) = try dlq(["list"], in: bridge.directory)
        #expect(afterwards.isEmpty, "\(afterwards)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    @Test func anUnreachableClusterHoldsTheEventsAndMakesReadinessFail() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let nowhere = try freeLoopbackPort()
        let bridge = try BridgeProcess.run(
            config: webhookConfig(
                url: emulator.url, sinks: sinks("127.0.0.1:\(nowhere)"), operations: true, mode: "activity"))
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.createArticles(3, title: "waiting")
        #expect(bridge.waitForLog("sink failed, retrying", timeout: 60), "\(bridge.stderr.suffix(2000))")
        #expect(
            bridge.waitUntil(timeout: 90) { _ in
                guard let answer = try? HTTPFetch.get(base + "/readyz") else { return false }
                return answer.status == 503 && answer.text.contains("-kafka-")  // stuck_sinks by sink id
            },
            "\(bridge.stderr.suffix(2000))")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit(timeout: 30) != nil)
    }

    /// librdkafka's mock brokers (2.0.2, and the 2.16 of confluent-kafka's wheel alike) answer no SaslHandshake, so
    /// no credential can succeed against them: this proves that `sasl.*` properties reach librdkafka (it attempts
    /// SASL/PLAIN and reports that the broker refuses the handshake), that the authentication failure is an error
    /// log with what to check and a `/readyz` reason, and that the password never reaches a log. A delivery with
    /// good SASL credentials needs a real broker and is not tested here.
    @Test func saslPropertiesReachLibrdkafkaAndAnAuthenticationFailureIsLoggedAndFailsReadiness() throws {
        let cluster = try KafkaMockPeer(brokers: 1)
        try cluster.createTopic(Self.topic, partitions: 1, replicationFactor: 1)
        let emulator = try Emulator()
        defer { emulator.stop() }
        let password = "sasl-pass-7f3e9"
        let sink = """
              - type: kafka
                brokers: ["\(cluster.bootstrapServers)"]
                properties:
                  security.protocol: SASL_PLAINTEXT
                  sasl.mechanism: PLAIN
                  sasl.username: bridge
                  sasl.password: "\(password)"

            """
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: sink, operations: true, mode: "activity"))
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.createArticles(3, title: "waiting for SASL")
        #expect(bridge.waitForLog("sink failed, retrying", timeout: 60), "\(bridge.stderr.suffix(2000))")
        let line = bridge.stderr.split(separator: "\n").first { $0.contains("sink failed, retrying") } ?? ""
        #expect(line.contains("ERROR") && line.contains("SASL") && line.contains("sasl.*"), "\(line)")
        #expect(
            bridge.waitUntil(timeout: 90) { _ in
                guard let answer = try? HTTPFetch.get(base + "/readyz") else { return false }
                return answer.status == 503 && answer.text.contains("-kafka-") && answer.text.contains("SASL")
            },
            "\(bridge.stderr.suffix(2000))")
        #expect(!bridge.stderr.contains(password))
        #expect(try read(cluster, expected: 0).isEmpty)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit(timeout: 30) != nil)
    }

    @Test func checkDescribesTheTopicAndDeliversATestEvent() throws {
        let cluster = try KafkaMockPeer(brokers: 3)
        try cluster.createTopic(Self.topic, partitions: 2, replicationFactor: 3)
        let emulator = try Emulator()
        defer { emulator.stop() }
        func check(_ servers: String, _ arguments: [String] = []) throws -> (code: Int32?, line: String) {
            let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "kafka-check")
            try webhookConfig(url: emulator.url, sinks: sinks(servers))
                .write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
            let run = try BridgeProcess(
                arguments: ["check", "--config", "bridge.yaml"] + arguments, directory: directory)
            let code = run.waitForExit(timeout: 60)
            return (code, run.lines.first { $0.contains("kafka sinks[1] 127.0.0.1") } ?? "missing: \(run.lines)")
        }
        let found = try check(cluster.bootstrapServers)
        #expect(found.code == 0 && found.line.contains("topic \(Self.topic): 2 partitions, 3 brokers"), "\(found.line)")
        let sent = try check(cluster.bootstrapServers, ["--send-test-event"])
        #expect(sent.code == 0 && sent.line.contains("delivered to \(Self.topic)"), "\(sent.line)")
        let read = try read(cluster, expected: 1)
        // The sink's headers (KafkaBrokerClientTests), names and order, with the test event's values.
        let testID = sent.line.components(separatedBy: "test event ").last?.split(separator: " ").first.map(String.init)
        #expect(
            read.map(\.headers) == [
                [["id", testID ?? "?"], ["type", "directus.bridge.test"], ["collection", "articles"], ["event", "test"]]
            ],
            "\(sent.line)")
        #expect(testID?.hasPrefix("evt_test_") == true, "\(sent.line)")
        #expect(read.first?.value.contains("directus.bridge.test") == true)
        // Nothing listens there: FAIL with what to check.
        let nowhere = try check("127.0.0.1:\(try freeLoopbackPort())")
        #expect(
            nowhere.code == 1 && nowhere.line.hasPrefix("FAIL ") && nowhere.line.contains("reachable"),
            "\(nowhere.line)")
    }

    /// `check` describes the topic of every collection the sink takes, not only the first subscription's: with
    /// `directus.{collection}` and a second subscription whose topic was missing (a cluster that does not create
    /// topics), it said ok, and that collection's events then waited at the sink's cursor forever at run time; a
    /// sink that takes only the second collection had a topic it never uses checked instead of its own. (The mock
    /// cluster creates every topic it is asked about, so the test tells by the topics the line names.)
    @Test func checkDescribesTheTopicOfEverySubscribedCollection() throws {
        let cluster = try KafkaMockPeer(brokers: 1)
        try cluster.createTopic(Self.topic, partitions: 2, replicationFactor: 1)
        let emulator = try Emulator()
        defer { emulator.stop() }
        func check(_ extra: String) throws -> (code: Int32?, line: String) {
            let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "kafka-check-every")
            try webhookConfig(url: emulator.url, sinks: sinks(cluster.bootstrapServers, extra))
                .replacingOccurrences(
                    of: "  - collection: articles\n", with: "  - collection: articles\n  - collection: comments\n")
                .write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
            let run = try BridgeProcess(arguments: ["check", "--config", "bridge.yaml"], directory: directory)
            let code = run.waitForExit(timeout: 60)
            return (code, run.lines.first { $0.contains("kafka sinks[1] 127.0.0.1") } ?? "missing: \(run.lines) \(run.stderr)")
        }
        let both = try check("")
        #expect(both.code == 0 && both.line.hasPrefix("ok   "), "\(both.line)")
        #expect(both.line.contains("topic \(Self.topic): 2 partitions"), "\(both.line)")
        #expect(both.line.contains("topic directus.comments: "), "\(both.line)")
        let comments = try check("collections: [comments]")
        #expect(comments.line.hasPrefix("ok   ") && comments.line.contains("topic directus.comments: "), "\(comments.line)")
        #expect(!comments.line.contains(Self.topic), "\(comments.line)")
    }

    /// Settings librdkafka accepts one by one but refuses when the producer is made (a CA file whose certificate does
    /// not parse, `max.in.flight.requests.per.connection` beyond what idempotence allows) stopped `run` at the sink's
    /// start with exit 1, "unexpected internal failure"; a configuration error is 78. Nothing needs to listen at the
    /// brokers. (A CA file that is not there is refused earlier, as the configuration is loaded: `LibraryFileTests`.)
    @Test func settingsLibrdkafkaRefusesTogetherStopRunWithTheConfigurationExitCode() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        for properties in [
            "      security.protocol: SSL\n      ssl.ca.location: ca.pem\n",
            "      max.in.flight.requests.per.connection: \"50\"\n",
        ] {
            let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "kafka-refusal")
            try "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n".write(
                to: directory.appendingPathComponent("ca.pem"), atomically: true, encoding: .utf8)
            let sink = "  - type: kafka\n    brokers: [\"127.0.0.1:1\"]\n    properties:\n" + properties
            let bridge = try BridgeProcess.run(
                config: webhookConfig(url: emulator.url, sinks: sink, mode: "activity"), in: directory)
            let code = bridge.waitForExit(timeout: 60)
            #expect(code == 78, "\(properties): \(bridge.stderr.suffix(1500))")
            #expect(bridge.stderr.contains("librdkafka"), "\(bridge.stderr.suffix(1500))")
        }
    }
}
