import BridgeConfig
import BridgeSinks
import Testing

/// `type: mqtt` entries: defaults, the password kept out of the summary and the dump, every refusal naming its key,
/// and the state topic's one level per key.
@Suite struct MQTTSinkConfigTests {
    func yaml(_ lines: [String]) -> String {
        minimalYAML.replacingOnce(
            "  - type: ndjson\n",
            with: (["- type: mqtt"] + lines.map { "  " + $0 }).map { "  \($0)\n" }.joined()
        )
    }

    @Test func defaultsAndTheRedactedPassword() throws {
        let sink = try #require(try config(yaml(["url: mqtt://bridge:secret-pw@127.0.0.1"])).sinks.first)
        let settings = try #require(sink.settings(as: MQTTSinkConfig.self))
        #expect(settings.topic == "directus/{collection}/{event}" && settings.qos == 1 && settings.stateTopic == nil)
        #expect(settings.maxInFlight == 1_000 && settings.secrets == ["secret-pw"])
        #expect(settings.summary == "mqtt:mqtt://127.0.0.1:1883/directus/{collection}/{event}")
        #expect(!settings.yamlLines.joined().contains("secret-pw"), "\(settings.yamlLines)")
        let client = try settings.clientSettings(clientID: "directus-bridge-devices")
        #expect(client.url.port == 1883 && client.clientID == "directus-bridge-devices")
    }

    @Test func everyRefusalNamesItsKey() {
        let cases: [([String], String)] = [
            (["topic: directus/a"], "missing required key \"url\""),
            (["url: http://127.0.0.1:1883"], "sinks[0].url"),
            (["url: mqtt://127.0.0.1/path"], "sinks[0].url"),
            (["url: mqtt://127.0.0.1", "topic: \"directus/+/{event}\""], "sinks[0].topic"),
            (["url: mqtt://127.0.0.1", "topic: \"directus/{colection}\""], "sinks[0].topic: unknown placeholder"),
            (["url: mqtt://127.0.0.1", "qos: 0"], "sinks[0].qos must be between 1 and 2"),
            (["url: mqtt://127.0.0.1", "state_topic: \"s/{event}/{key}\""], "state_topic: unknown placeholder"),
            (["url: mqtt://127.0.0.1", "state_topic: \"s/#/{key}\""], "sinks[0].state_topic"),
            (["url: mqtt://127.0.0.1", "state_topic: \"state/articles\""], "sinks[0].state_topic must name {key}"),
            (["url: mqtt://127.0.0.1", "max_in_flight: 70000"], "sinks[0].max_in_flight must be between 1 and 65535"),
        ]
        for (lines, expected) in cases {
            let found = issues(yaml(lines))
            #expect(found.count == 1 && found.first?.contains(expected) == true, "\(lines): \(found)")
        }
    }

    /// One retained message per topic: a state topic without `{key}` would keep only the last item's state, one
    /// without `{collection}` for a sink of several collections would mix items of two collections with one key.
    @Test func aStateTopicNamesEachItemApart() {
        let two = yaml(["url: mqtt://127.0.0.1", "state_topic: \"state/{key}\""])
            .replacingOnce("  - collection: articles\n", with: "  - collection: articles\n  - collection: tags\n")
        let found = issues(two)
        #expect(found.count == 1 && found.first?.contains("sinks[0].state_topic must name {collection}") == true, "\(found)")
        let one = yaml(["url: mqtt://127.0.0.1", "state_topic: \"state/{key}\""])
        #expect(issues(one) == ["<valid>"], "one collection: {key} alone names each item apart")
        let filtered = yaml(["url: mqtt://127.0.0.1", "state_topic: \"state/{key}\"", "collections: [tags]"])
            .replacingOnce("  - collection: articles\n", with: "  - collection: articles\n  - collection: tags\n")
        #expect(issues(filtered) == ["<valid>"], "a sink of one collection among several")
    }

    @Test func aKeyIsOneLevelOfTheStateTopic() {
        let topic = MQTTStateTopic(text: "state/{collection}/{key}")
        #expect(topic.render(collection: "articles", key: "42") == "state/articles/42")
        #expect(topic.render(collection: "articles", key: "a/b+c#d%e") == "state/articles/a%2Fb%2Bc%23d%25e")
        #expect(topic.render(collection: "articles", key: "a%2Fb") != topic.render(collection: "articles", key: "a/b"))
        #expect(topic.render(collection: "articles", key: "über") == "state/articles/über")
    }
}
