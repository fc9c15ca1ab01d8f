import BridgeSystem
package import BridgeConfig
internal import BridgeKafka
internal import BridgeEvents

/// A Kafka sink (`type: kafka`): each event is produced to a topic with the item key as message key, headers `id`,
/// `type`, `collection`, `event`, and counts as delivered on its delivery report (idempotent producer, `acks=all`).
package struct KafkaSinkConfig: SinkSettings, Equatable {
    /// Bootstrap servers, `host:port` each (`brokers`). Required.
    package var brokers: [String]
    /// The topic template (`topic`); `{collection}` and `{event}` are replaced per event.
    /// Default: `directus.{collection}`.
    package var topic: String
    /// librdkafka's own settings (`properties`: `security.protocol`, `sasl.*`, `ssl.*`, `compression.type`, …), as
    /// text. Default: none.
    package var properties: [String: String]
    /// Events produced and not reported yet, at most (`max_outstanding`), 1…1,000,000. Default: 10000.
    package var maxOutstanding: Int

    /// The default of `topic`.
    package static let defaultTopic = "directus.{collection}"
    /// The allowed range of `maxOutstanding`.
    package static let maxOutstandingRange: ClosedRange<Int> = 1...1_000_000
    /// The default of `maxOutstanding`.
    package static let defaultMaxOutstanding = 10_000

    /// Creates a configuration with the contract's defaults for everything but `brokers`.
    package init(
        brokers: [String],
        topic: String = KafkaSinkConfig.defaultTopic,
        properties: [String: String] = [:],
        maxOutstanding: Int = KafkaSinkConfig.defaultMaxOutstanding
    ) {
        self.brokers = brokers
        self.topic = topic
        self.properties = properties
        self.maxOutstanding = maxOutstanding
    }

    /// The values of secret-looking properties (`sasl.password`, `ssl.key.password`, …).
    package var secrets: [String] { producerSettings.secretValues }

    /// `kafka:host:9092,other:9092/<topic>`.
    package var summary: String { "kafka:" + brokers.joined(separator: ",") + "/" + topic }

    package var yamlLines: [String] {
        var lines = [
            "brokers: \(ConfigText.list(brokers.map(ConfigText.quoted)))",
            "topic: \(ConfigText.quoted(topic))",
            properties.isEmpty ? "properties: {}" : "properties:",
        ]
        for name in properties.keys.sorted() {
            let value =
                KafkaProducerSettings.isSecret(property: name)
                ? ConfigText.redacted : ConfigText.quoted(properties[name] ?? "")
            lines.append("  \(ConfigText.quoted(name)): \(value)")
        }
        lines.append("max_outstanding: \(maxOutstanding)")
        return lines
    }

    /// The producer's settings.
    var producerSettings: KafkaProducerSettings {
        KafkaProducerSettings(bootstrapServers: brokers, properties: properties, maxOutstanding: maxOutstanding)
    }

    /// How `sinks` entries of `type: kafka` are read.
    package static let configType = SinkConfigType(
        name: "kafka", keys: ["brokers", "topic", "properties", "max_outstanding"],
        decode: { decoder, map in decode(&decoder, map) }
    )

    private static func decode(_ decoder: inout ConfigDecoder, _ map: MappingView) -> KafkaSinkConfig? {
        let present = decoder.requirePresent(map, "brokers", hint: " (kafka sinks need at least one broker)")
        let brokers = decoder.stringList(map, "brokers")
        for broker in brokers {
            guard let problem = ServerAddress.kafkaBrokerProblem(broker.text) else { continue }
            decoder.report("\(map.field("brokers")): \"\(broker.text)\" must be host:port: \(problem)", at: broker.mark)
        }
        if present, brokers.isEmpty, let node = map["brokers"] {
            decoder.report("\(map.field("brokers")): list at least one broker", at: node.mark)
        }
        var config = KafkaSinkConfig(brokers: brokers.map(\.text))
        config.topic = EventNameTemplate.decode(
            config.topic, key: "topic", &decoder, map, refusal: "is not a Kafka topic name (1-249 of a-z A-Z 0-9 . _ -)"
        ) { name throws(KafkaError) in try KafkaTopicName.validate(name) }
        config.properties = properties(&decoder, map)
        config.maxOutstanding = decoder.integer(
            map, "max_outstanding", default: defaultMaxOutstanding, range: maxOutstandingRange)
        return present && !brokers.isEmpty ? config : nil
    }

    /// `properties`: a mapping of librdkafka setting names to scalar values, none of those the bridge sets itself.
    private static func properties(_ decoder: inout ConfigDecoder, _ map: MappingView) -> [String: String] {
        guard let node = map["properties"] else { return [:] }
        guard case .mapping(let entries) = node.content else {
            if node.scalar?.alreadyReported != true {
                decoder.report(
                    "\(map.field("properties")): expected a mapping such as { security.protocol: SASL_SSL }, got "
                        + node.kindDescription,
                    at: node.mark)
            }
            return [:]
        }
        var properties: [String: String] = [:]
        for entry in entries {
            let field = "\(map.field("properties")).\(entry.key)"
            if KafkaProducerSettings.reservedProperties.contains(entry.key) {
                decoder.report(
                    "\(field) is set by the bridge (\(KafkaProducerSettings.reservedReason))",
                    at: entry.keyMark)
                continue
            }
            guard let scalar = decoder.scalar(entry.value, field: field, expected: "a value") else { continue }
            // librdkafka takes C strings: a NUL would cut any value. A line break in a credential (a PEM key
            // excepted, which spans lines) is refused like every credential's.
            let spansLines = entry.key.hasSuffix(".pem")
            if scalar.text.utf8.contains(0) || (!spansLines && KafkaProducerSettings.isSecret(property: entry.key)) {
                decoder.refuseLineBreaks(scalar.text, field: field, at: entry.value.mark)
                if OneLine.isBroken(scalar.text) { continue }
            }
            // librdkafka checks names and values offline: a typo is a configuration error here, not a sink that
            // stops `run` at its start.
            switch KafkaPropertyCheck.check(name: entry.key, value: scalar.text) {
            case .accepted: break
            case .unknown: decoder.report("\(field): unknown librdkafka property", at: entry.keyMark)
            case .invalidValue(let reason): decoder.report("\(field): invalid value\(reason)", at: entry.value.mark)
            }
            if let kind = KafkaFileProperty.byName[entry.key] {
                checkFile(scalar.text, kind: kind, field: field, at: entry.value.mark, &decoder)
            }
            properties[entry.key] = scalar.text
        }
        return properties
    }

    /// A property naming a file librdkafka opens as the producer is made: a regular file (a CA location may be a
    /// directory or `probe`), PEM where librdkafka reads PEM. Empty means not set.
    private static func checkFile(
        _ path: String, kind: KafkaFileProperty, field: String, at mark: SourceMark, _ decoder: inout ConfigDecoder
    ) {
        switch kind {
        case _ where path.isEmpty: return
        case .caLocation where path == KafkaFileProperty.probe: return
        case .caLocation:
            decoder.checkLibraryFile(path, field: field, at: mark, pem: "certificate", directoryAllowed: true)
        case .pem(let what): decoder.checkLibraryFile(path, field: field, at: mark, pem: what)
        case .binary: decoder.checkLibraryFile(path, field: field, at: mark)
        }
    }
}
