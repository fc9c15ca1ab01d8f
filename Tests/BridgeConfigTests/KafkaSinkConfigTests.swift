import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeSinks
import Testing

/// `type: kafka` entries: defaults, librdkafka properties (secret values redacted, the bridge's own refused),
/// topic templates.
@Suite struct KafkaSinkConfigTests {
    func yaml(_ lines: [String]) -> String {
        let entry = (["- type: kafka"] + lines).map { "  \($0)\n" }.joined()
        return minimalYAML.replacingOnce("  - type: ndjson\n", with: entry)
    }

    func kafka(_ lines: [String]) throws -> KafkaSinkConfig? {
        try config(yaml(lines)).sinks.first?.settings(as: KafkaSinkConfig.self)
    }

    @Test func defaultsFollowTheContract() throws {
        let sink = try #require(try kafka(["  brokers: [\"kafka-1:9092\", \"kafka-2:9092\"]"]))
        #expect(sink == KafkaSinkConfig(brokers: ["kafka-1:9092", "kafka-2:9092"]))
        #expect(sink.topic == "directus.{collection}" && sink.properties.isEmpty && sink.maxOutstanding == 10_000)
        #expect(sink.summary == "kafka:kafka-1:9092,kafka-2:9092/directus.{collection}")
    }

    @Test func propertiesPassThroughAndSecretsAreRedacted() throws {
        let sink = try #require(
            try kafka([
                "  brokers: [\"k:9093\"]", "  topic: \"cdc.{collection}.{event}\"", "  properties:",
                "    security.protocol: SASL_SSL", "    sasl.mechanism: PLAIN", "    sasl.username: bridge",
                "    sasl.password: pa55word", "    linger.ms: 5", "  max_outstanding: 200",
            ]))
        #expect(sink.topic == "cdc.{collection}.{event}" && sink.maxOutstanding == 200)
        #expect(
            sink.properties == [
                "security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.username": "bridge",
                "sasl.password": "pa55word", "linger.ms": "5",
            ])
        #expect(sink.secrets == ["pa55word"])
        #expect(!sink.yamlLines.joined().contains("pa55word"))
        #expect(sink.yamlLines.contains("  \"sasl.username\": \"bridge\""))
    }

    @Test func theBridgesOwnSettingsAreRefused() {
        for key in ["acks", "enable.idempotence", "bootstrap.servers", "message.timeout.ms", "delivery.report.only.error"] {
            let found = issues(yaml(["  brokers: [\"k:9092\"]", "  properties:", "    \(key): x"]))
            #expect(found.count == 1 && found[0].contains("is set by the bridge"), "\(key): \(found)")
        }
        let scalar = issues(yaml(["  brokers: [\"k:9092\"]", "  properties: none"]))
        #expect(scalar.count == 1 && scalar[0].contains("expected a mapping"), "\(scalar)")
    }

    /// librdkafka checks a property's name and value as it is set, without a connection: `validate` asks it. Before,
    /// a misspelt name or a value librdkafka refuses passed `validate` ("ok") and stopped `run` at the sink's start
    /// with exit 1, not the configuration error's 78.
    @Test func propertiesLibrdkafkaRefusesAreConfigurationErrors() {
        let misspelt = issues(yaml(["  brokers: [\"k:9092\"]", "  properties:", "    compresion.type: lz4"]))
        #expect(
            misspelt == ["bridge.yaml:11:7: sinks[0].properties.compresion.type: unknown librdkafka property"],
            "\(misspelt)")
        let value = issues(yaml(["  brokers: [\"k:9092\"]", "  properties:", "    linger.ms: banana"]))
        #expect(
            value.count == 1 && value[0].hasPrefix("bridge.yaml:11:18: sinks[0].properties.linger.ms: invalid value"),
            "\(value)")
        let fine = [
            "    compression.type: lz4", "    linger.ms: 5", "    security.protocol: SASL_SSL", "    sasl.mechanism: PLAIN",
        ]
        #expect(issues(yaml(["  brokers: [\"k:9092\"]", "  properties:"] + fine)) == ["<valid>"])
    }

    @Test func brokersAreRequiredHostPorts() {
        let none = issues(yaml(["  topic: t"]))
        #expect(none.count == 1 && none[0].contains("missing required key \"brokers\""), "\(none)")
        let url = issues(yaml(["  brokers: [\"kafka://k:9092\"]"]))
        #expect(url.count == 1 && url[0].contains("must be host:port"), "\(url)")
        // A typo is a configuration error naming the entry, not a connection librdkafka retries forever.
        for bad in ["k:99999", "k:0", "k:-1", ":9092", "k:9092:1", " k:9092", "k:9092,j:9092", "k:90 92", "::1:9092"] {
            let found = issues(yaml(["  brokers: [\"\(bad)\"]"]))
            #expect(found.count == 1 && found[0].contains("\"\(bad)\" must be host:port"), "\(bad): \(found)")
        }
        for good in ["k:9092", "kafka-1.example.com:19092", "10.0.0.1:9092", "[::1]:9092"] {
            #expect(issues(yaml(["  brokers: [\"\(good)\"]"])) == ["<valid>"], "\(good)")
        }
    }

    @Test func topicTemplatesAreChecked() {
        for bad in ["has space", "slash/{collection}", String(repeating: "x", count: 250)] {
            let found = issues(yaml(["  brokers: [\"k:9092\"]", "  topic: \"\(bad)\""]))
            #expect(found.count == 1 && found[0].contains("is not a Kafka topic name"), "\(bad): \(found)")
        }
        let typo = issues(yaml(["  brokers: [\"k:9092\"]", "  topic: \"cdc.{Collection}\""]))
        #expect(typo.count == 1 && typo[0].contains("unknown placeholder \"{Collection}\""), "\(typo)")
    }

    /// `yaml(lines)` subscribed to `collections` (in this order) instead of `articles` alone.
    func yaml(_ lines: [String], subscribing collections: [String]) -> String {
        let subscriptions = collections.map { "  - collection: \"\($0)\"\n" }.joined()
        return yaml(lines).replacingOnce("  - collection: articles\n", with: subscriptions)
    }

    /// Directus takes any collection name its database takes (`POST /collections` refuses only a `directus_` prefix):
    /// spaces, letters beyond ASCII, long names. The topic is rendered for every collection the sink takes, the
    /// default template included: a name Kafka refuses would have had every event of that collection rejected and
    /// passed over at run time, with `validate` saying ok.
    @Test func theTopicOfEverySubscribedCollectionIsChecked() {
        let long = String(repeating: "l", count: 246)
        for collection in ["blog posts", "Artikel_ä", long] {
            for topic in [[], ["  topic: \"cdc.{collection}\""]] {
                let found = issues(yaml(["  brokers: [\"k:9092\"]"] + topic, subscribing: ["articles", collection]))
                #expect(found.count == 1, "\(collection) \(topic): \(found)")
                #expect(found.first?.contains("is not a Kafka topic name") == true, "\(found)")
                #expect(found.first?.contains("for collection \"\(collection)\"") == true, "\(found)")
            }
            // A sink that does not take the collection, or a topic that does not name it, is fine.
            let filtered = ["  brokers: [\"k:9092\"]", "  collections: [articles]"]
            #expect(issues(yaml(filtered, subscribing: ["articles", collection])) == ["<valid>"], "\(collection)")
            let fixed = ["  brokers: [\"k:9092\"]", "  topic: cdc.{event}"]
            #expect(issues(yaml(fixed, subscribing: ["articles", collection])) == ["<valid>"], "\(collection)")
        }
        // The events the sink takes count too: `snapshot` is the longest.
        let edge = String(repeating: "e", count: 241)
        let events = ["  brokers: [\"k:9092\"]", "  topic: \"{collection}.{event}\""]
        #expect(issues(yaml(events, subscribing: [edge])).first?.contains("is not a Kafka topic name") == true)
        #expect(issues(yaml(events + ["  events: [create, update]"], subscribing: [edge])) == ["<valid>"])
    }
}
