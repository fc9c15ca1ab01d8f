package import BridgeConfig
package import BridgeMQTT
import BridgeSystem

/// An MQTT sink (`type: mqtt`): each event is published with QoS 1 or 2 to the topic its template names, with the
/// MQTT 5 user properties `id`, `type`, `collection`, `key` and `event`, and counts as delivered on the broker's
/// PUBACK (QoS 1) or PUBCOMP (QoS 2). With `state_topic`, each item's latest event is also kept there as the
/// retained message, and a delete clears it.
package struct MQTTSinkConfig: URLBrokerSettings, Equatable {
    /// `mqtt://[user[:password]@]host[:port]`, `mqtts://` for TLS (`url`). Required.
    package var url: String
    /// The topic template (`topic`); `{collection}` and `{event}` are replaced per event.
    /// Default: `directus/{collection}/{event}`.
    package var topic: String
    /// 1 (at least once, PUBACK) or 2 (PUBCOMP) (`qos`). Default: 1.
    package var qos: Int
    /// The retained per-item topic template (`state_topic`, `{collection}` and `{key}`); nil: none. Default: none.
    package var stateTopic: String?
    /// A CA file (PEM) trusted besides the system's for `mqtts://` (`ca_file`). Default: none.
    package var caFile: String?
    /// Messages sent and not acknowledged at most (`max_in_flight`), 1…65,535 (MQTT's packet ids). Default: 1000.
    package var maxInFlight: Int

    /// The default of `topic`.
    package static let defaultTopic = "directus/{collection}/{event}"
    /// The default of `maxInFlight`.
    package static let defaultMaxInFlight = 1_000

    /// Creates a configuration with the defaults for everything but `url`.
    package init(
        url: String,
        topic: String = MQTTSinkConfig.defaultTopic,
        qos: Int = 1,
        stateTopic: String? = nil,
        caFile: String? = nil,
        maxInFlight: Int = MQTTSinkConfig.defaultMaxInFlight
    ) {
        self.url = url
        self.topic = topic
        self.qos = qos
        self.stateTopic = stateTopic
        self.caFile = caFile
        self.maxInFlight = maxInFlight
    }

    /// The topic template.
    package var destination: String { topic }

    /// `topic`, `qos` and `state_topic`.
    package var destinationYAMLLines: [String] {
        [
            "topic: \(ConfigText.quoted(topic))",
            "qos: \(qos)",
            "state_topic: \(ConfigText.quoted(stateTopic ?? ""))",
        ]
    }

    /// The client's settings with `clientID` (the URL was checked when the file was read). `sessionExpiry` zero
    /// ends the session at the disconnect (a `check` probe leaves nothing behind).
    package func clientSettings(clientID: String, sessionExpiry: Duration = .seconds(86_400)) throws(MQTTError)
        -> MQTTSettings
    {
        try MQTTSettings(
            url: url,
            clientID: clientID,
            qos: qos,
            caFile: caFile,
            sessionExpiry: sessionExpiry,
            maxInFlight: maxInFlight
        )
    }

    /// How `sinks` entries of `type: mqtt` are read.
    package static let configType = SinkConfigType(
        name: "mqtt",
        keys: keys(["topic", "qos", "state_topic"]),
        decode: { decoder, map in decode(&decoder, map) }
    )

    private static func decode(_ decoder: inout ConfigDecoder, _ map: MappingView) -> MQTTSinkConfig? {
        let server = decodeServer(
            &decoder,
            map,
            example: "mqtt://host:1883",
            defaultMaxInFlight: defaultMaxInFlight,
            range: 1...65_535
        ) { url throws(MQTTError) in _ = try MQTTSettings(url: url, clientID: "directus-bridge") }
        var config = MQTTSinkConfig(url: server.url, caFile: server.caFile, maxInFlight: server.maxInFlight)
        config.topic = EventNameTemplate.decode(
            config.topic, key: "topic", &decoder, map,
            refusal: "is not a usable MQTT topic (1 to 65535 bytes, no + or #)", validate: MQTTTopic.validate
        )
        config.qos = decoder.integer(map, "qos", default: 1, range: 1...2)
        config.stateTopic = decoder.string(map, "state_topic")
        if let stateTopic = config.stateTopic {
            MQTTStateTopic.check(stateTopic, key: "state_topic", &decoder, map)
        }
        return server.isValid ? config : nil
    }
}
