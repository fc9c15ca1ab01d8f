import BridgeConfig
import BridgeSinks
import Testing

/// `type: amqp` entries: the defaults, the default exchange (""), and every refusal names its key.
@Suite struct AMQPSinkConfigTests {
    /// The minimal configuration with one amqp entry of `lines` (each after `- type: amqp`).
    private func yaml(_ lines: [String]) -> String {
        minimalYAML.replacingOnce(
            "  - type: ndjson\n",
            with: (["  - type: amqp"] + lines.map { "    " + $0 }).joined(separator: "\n") + "\n"
        )
    }

    private func settings(_ lines: [String]) throws -> AMQPSinkConfig {
        try #require(try config(yaml(lines)).sinks.first?.settings as? AMQPSinkConfig)
    }

    @Test func theDefaultsAndTheDefaultExchange() throws {
        let defaults = try settings(["url: amqp://bridge:secret-pw@rabbit-1/prod"])
        #expect(defaults.exchange == "directus" && defaults.routingKey == "{collection}.{event}")
        #expect(defaults.maxInFlight == 1_000 && defaults.caFile == nil)
        #expect(try defaults.clientSettings().vhost == "prod")
        #expect(defaults.summary == "amqp:amqp://rabbit-1:5672/directus")
        #expect(!defaults.yamlLines.joined().contains("secret-pw") && defaults.secrets == ["secret-pw"])
        #expect(try settings(["url: amqp://rabbit-1", "exchange: \"\""]).exchange == "")
        let set = try settings([
            "url: amqps://rabbit-1", "exchange: events", "routing_key: \"cms.{event}\"", "max_in_flight: 50",
        ])
        #expect(set.exchange == "events" && set.routingKey == "cms.{event}" && set.maxInFlight == 50)
    }

    @Test func everyRefusalNamesItsKey() {
        let long = String(repeating: "x", count: 256)
        let cases: [([String], String)] = [
            (["exchange: events"], "missing required key \"url\""),
            (["url: mqtt://rabbit-1"], "sinks[0].url:"),
            (["url: amqp://rabbit-1/a/b"], "sinks[0].url: the path"),
            (["url: amqp://rabbit-1", "routing_key: \"{colection}\""], "sinks[0].routing_key: unknown placeholder"),
            (["url: amqp://rabbit-1", "routing_key: \(long)"], "sinks[0].routing_key: \"\(long)\" is not a usable"),
            (["url: amqp://rabbit-1", "exchange: \(long)"], "sinks[0].exchange: the exchange name is longer"),
            (["url: amqp://rabbit-1", "max_in_flight: 0"], "sinks[0].max_in_flight must be between 1 and 100000"),
            (["url: amqp://rabbit-1", "queue: q"], "unknown key \"queue\""),
        ]
        for (lines, expected) in cases {
            let found = issues(yaml(lines))
            #expect(found.count == 1 && found[0].contains(expected), "\(lines): \(found)")
        }
    }
}
