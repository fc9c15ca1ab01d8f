import BridgeConfig
import BridgeSinks
import Testing

/// The part the Redis, MQTT and AMQP sinks share (`URLBrokerSettings`): the dump of each entry in its order (`url`
/// redacted, the sink's own keys, `ca_file`, `max_in_flight`, the sink's trailing keys), the summary its sink id
/// hashes, the password as the one secret, and the missing `url`'s hint, each as the sink had it on its own.
@Suite struct URLBrokerSettingsTests {
    private static let pem = "/etc/bridge/ca.pem"
    private let files = InMemoryFiles([URLBrokerSettingsTests.pem: "-----BEGIN CERTIFICATE-----"])

    private func yaml(_ type: String, _ lines: [String]) -> String {
        minimalYAML.replacingOnce(
            "  - type: ndjson\n",
            with: (["- type: \(type)"] + lines.map { "  " + $0 }).map { "  \($0)\n" }.joined()
        )
    }

    private func settings(_ type: String, _ lines: [String]) throws -> any SinkSettings {
        try #require(try config(yaml(type, lines), files: files).sinks.first?.settings)
    }

    @Test func eachSinksDumpSummaryAndSecretsKeepTheirShape() throws {
        let redis = try settings("redis", ["url: rediss://app:secret-pw@cache-1:6380/2", "ca_file: \(Self.pem)"])
        #expect(
            redis.yamlLines == [
                "url: \"rediss://app:[REDACTED]@cache-1:6380/2\"", "stream: \"directus.{collection}\"", "maxlen: 0",
                "ca_file: \"/etc/bridge/ca.pem\"", "max_in_flight: 1000", "dedup_window: 24h",
            ],
            "\(redis.yamlLines)"
        )
        #expect(redis.summary == "redis:rediss://cache-1:6380/directus.{collection}")
        #expect(redis.secrets == ["secret-pw"])

        let mqtt = try settings("mqtt", ["url: mqtt://dev:secret-pw@mqtt-1", "max_in_flight: 20"])
        #expect(
            mqtt.yamlLines == [
                "url: \"mqtt://dev:[REDACTED]@mqtt-1\"", "topic: \"directus/{collection}/{event}\"", "qos: 1",
                "state_topic: \"\"", "max_in_flight: 20",
            ],
            "\(mqtt.yamlLines)"
        )
        #expect(mqtt.summary == "mqtt:mqtt://mqtt-1:1883/directus/{collection}/{event}")

        let amqp = try settings("amqp", ["url: amqps://guest:secret-pw@rabbit-1/vh", "tls:", "  ca_file: \(Self.pem)"])
        #expect(
            amqp.yamlLines == [
                "url: \"amqps://guest:[REDACTED]@rabbit-1/vh\"", "exchange: \"directus\"",
                "routing_key: \"{collection}.{event}\"", "ca_file: \"/etc/bridge/ca.pem\"", "max_in_flight: 1000",
            ],
            "\(amqp.yamlLines)"
        )
        #expect(amqp.summary == "amqp:amqps://rabbit-1:5671/directus" && amqp.secrets == ["secret-pw"])
    }

    @Test func aMissingURLIsRefusedWithTheSinksExample() {
        let cases = [
            ("redis", "(redis sinks need redis://host:6379)"), ("mqtt", "(mqtt sinks need mqtt://host:1883)"),
            ("amqp", "(amqp sinks need amqp://user:password@host:5672/vhost)"),
        ]
        for (type, hint) in cases {
            let found = issues(yaml(type, ["max_in_flight: 10"]), files: files)
            let expected = "missing required key \"url\" in sinks[0] \(hint)"
            #expect(found.count == 1 && found.first?.contains(expected) == true, "\(found)")
        }
    }
}
