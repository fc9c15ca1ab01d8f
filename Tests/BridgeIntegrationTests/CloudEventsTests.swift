import BridgeTestSupport
import Foundation
import Testing

/// `format: cloudevents` end to end: NDJSON lines, webhook requests, Kafka messages and JetStream messages of the
/// real binary, parsed by the `cloudevents` PyPI SDK (Tests/tools/cloudevents_parse.py) as a consumer would.
@Suite(.serialized) struct CloudEventsTests {
    /// The SDK's reading of `structured` texts, `http` requests and `kafka` messages, one dictionary per event.
    private func parse(structured: [String], http: [WebhookReceiver.Request], kafka: [KafkaReadMessage] = [])
        throws -> [[String: Any]]
    {
        let input: [String: Any] = [
            "structured": structured,
            "http": http.map { ["headers": $0.headers, "body": $0.body] },
            "kafka": kafka.map { ["headers": $0.headers, "key": $0.key, "value": $0.value] },
        ]
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cloudevents")
        let file = directory.appendingPathComponent("input.json")
        try JSONSerialization.data(withJSONObject: input).write(to: file)
        let result = try PythonTool.run(script: "cloudevents_parse.py", arguments: [file.path])
        #expect(result.status == 0, "the SDK refused: \(result.stderr)")
        return result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// One article created (with a title that needs escaping), updated and deleted; returns its key.
    private func createUpdateAndDelete(_ emulator: Emulator) throws -> String {
        let key = try emulator.create("articles", ["title": "Grüße \"quoted\" / ✓", "status": "draft"])
        try emulator.rest("PATCH", "/items/articles/\(key)", ["status": "published"])
        try emulator.rest("DELETE", "/items/articles/\(key)")
        return key
    }

    /// Plain event lines (`format: event`) by their `id`.
    private func eventsByID(_ lines: [String]) -> [String: NSDictionary] {
        Dictionary(
            lines.compactMap { line -> (String, NSDictionary)? in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary,
                    let id = object["id"] as? String
                else { return nil }
                return (id, object)
            },
            uniquingKeysWith: { first, _ in first })
    }

    /// `event` (as the SDK read it) wraps the plain event of the same id: `data` is the whole event object, exactly
    /// what the default format writes, and the attributes follow from it.
    private func expectCloudEvent(
        _ event: [String: Any], of plainByID: [String: NSDictionary], source: String, key: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let id = event["id"] as? String ?? ""
        let data = event["data"] as? NSDictionary
        #expect(data != nil && data == plainByID[id], "data of \(id)", sourceLocation: sourceLocation)
        #expect(event["specversion"] as? String == "1.0", sourceLocation: sourceLocation)
        #expect(event["source"] as? String == source, "directus.url without a slash", sourceLocation: sourceLocation)
        #expect(event["type"] as? String == data?["type"] as? String, sourceLocation: sourceLocation)
        #expect(event["subject"] as? String == "articles/\(key)", sourceLocation: sourceLocation)
        #expect(
            event["time"] as? String == (data?["time"] as? String).map { isoTime($0) }, sourceLocation: sourceLocation)
        #expect(event["datacontenttype"] as? String == "application/json", sourceLocation: sourceLocation)
    }

    @Test func ndjsonLinesAndWebhookBodiesAreCloudEventsThatTheSDKReads() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        let secret = "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        try receiver.setSecrets(["/ce": [secret]])
        let sinks =
            "  - type: ndjson\n    path: \"-\"\n    format: cloudevents\n"
            + "  - type: ndjson\n    path: ./plain.ndjson\n    fsync: always\n"
            + webhookSink(receiver.hookURL("/ce"), "secret: \(secret)\nformat: cloudevents")
            + webhookSink(receiver.hookURL("/plain"), "format: event")
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url + "/", sinks: sinks))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let key = try createUpdateAndDelete(emulator)
        #expect(bridge.waitUntil { $0.lines.count >= 3 }, "\(bridge.stderr)")
        #expect(bridge.waitUntil(timeout: 20) { _ in ((try? receiver.delivered().count) ?? 0) >= 6 }, "\(bridge.stderr)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr)")

        let plainText = try String(contentsOf: bridge.directory.appendingPathComponent("plain.ndjson"), encoding: .utf8)
        let plain = plainText.split(separator: "\n").map(String.init)
        let plainByID = eventsByID(plain)
        #expect(plainByID.count == 3, "plain lines: \(plain)")

        let requests = try receiver.delivered()
        let cloudRequests = requests.filter { $0.path == "/ce" }
        let plainRequests = requests.filter { $0.path == "/plain" }
        #expect(cloudRequests.count == 3 && plainRequests.count == 3)
        // Structured mode announces itself; the default format keeps the contract's header.
        for request in cloudRequests {
            #expect(request.headers["content-type"] == "application/cloudevents+json")
            #expect(request.verified.first as? Bool == true, "signature over the CloudEvent body: \(request.verified)")
        }
        for request in plainRequests {
            #expect(request.headers["content-type"] == "application/json")
            #expect(plainByID[request.id]?.isEqual(to: request.json) == true, "plain body changed: \(request.body)")
        }

        let parsed = try parse(structured: bridge.lines, http: cloudRequests)
        #expect(parsed.count == 6, "\(parsed)")
        for event in parsed {
            let id = event["id"] as? String ?? ""
            expectCloudEvent(event, of: plainByID, source: emulator.url, key: key)
            if let request = cloudRequests.first(where: { $0.id == id }), event["origin_of_parse"] as? String == "http" {
                #expect(request.headers["webhook-id"] == id)
            }
        }
        let types = Set(parsed.compactMap { $0["type"] as? String })
        #expect(types == ["directus.items.create", "directus.items.update", "directus.items.delete"])
    }

    @Test func kafkaAndJetStreamMessagesAreCloudEventsThatTheSDKReads() throws {
        let cluster = try KafkaMockPeer(brokers: 1)
        try cluster.createTopic("directus.articles", partitions: 2, replicationFactor: 1)
        let server = try NATSServer(name: "cloudevents", in: try TestEnvironment.makeTemporaryDirectory(prefix: "ce"))
        try server.start()
        try EventsStream.create([server], replicas: 1)
        let emulator = try Emulator()
        defer { emulator.stop() }
        let sinks =
            "  - type: ndjson\n    path: \"-\"\n"
            + "  - type: kafka\n    brokers: [\"\(cluster.bootstrapServers)\"]\n    format: cloudevents\n"
            + "  - type: jetstream\n    servers: [\"\(server.url)\"]\n    format: cloudevents\n"
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url + "/", sinks: sinks))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let key = try createUpdateAndDelete(emulator)
        #expect(bridge.waitUntil { $0.lines.count >= 3 }, "\(bridge.stderr)")
        let topic = "directus.articles"
        let kafka = try KafkaTopicReader.read(servers: cluster.bootstrapServers, topic: topic, expected: 3)
        let stored = EventsStream.waitFor([server], count: 3)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr)")
        // `check --send-test-event` sends the test event in the sink's format too.
        let check = try BridgeProcess(
            arguments: ["check", "--config", "bridge.yaml", "--send-test-event"], directory: bridge.directory)
        #expect(check.waitForExit(timeout: 60) == 0, "\(check.lines) \(check.stderr)")
        let tests = try KafkaTopicReader.read(servers: cluster.bootstrapServers, topic: topic, expected: 4).messages
            .map(\.value) + EventsStream.waitFor([server], count: 4).map(\.data)
        let testEvents = try parse(structured: tests.filter { $0.contains("directus.bridge.test") }, http: [])
        #expect(testEvents.count == 2 && testEvents.allSatisfy { $0["type"] as? String == "directus.bridge.test" })
        #expect(kafka.problem == nil && kafka.messages.count == 3 && stored.count == 3, "\(kafka) \(stored.count)")

        let plainByID = eventsByID(bridge.lines)
        // Structured mode on Kafka: the content-type header names the event format (CloudEvents Kafka protocol
        // binding, 3.2.1), beside the contract's headers.
        for message in kafka.messages {
            #expect(message.headers.contains(["content-type", "application/cloudevents+json"]), "\(message.headers)")
            #expect(Set(message.headers.map { $0.first ?? "" }).isSuperset(of: ["id", "type", "collection", "event"]))
        }
        let parsed = try parse(structured: stored.map(\.data), http: [], kafka: kafka.messages)
        #expect(parsed.count == 6, "\(parsed)")
        for event in parsed {
            let id = event["id"] as? String ?? ""
            expectCloudEvent(event, of: plainByID, source: emulator.url, key: key)
            if event["origin_of_parse"] as? String == "kafka" {
                #expect(event["partitionkey"] as? String == key, "the message key is the item key")
            } else {
                #expect(stored.first { $0.msg_id == id } != nil, "Nats-Msg-Id is the CloudEvent's id")
            }
        }
        #expect(Set(parsed.compactMap { $0["id"] as? String }) == Set(plainByID.keys))
    }

    @Test func anUnknownFormatIsAConfigurationErrorWithASuggestion() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cloudevents-config")
        let config = webhookConfig(
            url: "http://127.0.0.1:9", sinks: "  - type: ndjson\n    path: \"-\"\n    format: cloudevent\n")
        try config.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let process = try BridgeProcess(arguments: ["validate", "--config", "bridge.yaml"], directory: directory)
        #expect(process.waitForExit() == 78)
        #expect(process.stderr.contains("sinks[0].format"), "\(process.stderr)")
        #expect(process.stderr.contains("did you mean \"cloudevents\"?"), "\(process.stderr)")
    }

    /// The SDK prints times as `2026-12-02T10:15:00.123+00:00`; the bridge writes `…Z`.
    private func isoTime(_ text: String) -> String {
        text.hasSuffix("Z") ? String(text.dropLast()) + "+00:00" : text
    }
}
