package import BridgeAMQP
package import BridgeConfig
import BridgeSystem

/// A RabbitMQ sink (`type: amqp`, AMQP 0-9-1): each event is published to `exchange` with the routing key its
/// template names, persistent, `message_id` = the event id, `content_type` `application/json`, headers `type`,
/// `collection`, `key` and `event`, mandatory; it counts as delivered on the broker's publisher confirm. A message no
/// queue takes (basic.return) is a dead letter.
package struct AMQPSinkConfig: URLBrokerSettings, Equatable {
    /// `amqp://[user[:password]@]host[:port][/vhost]`, `amqps://` for TLS (`url`); the path is the percent-encoded
    /// vhost (`/` when left out). Required.
    package var url: String
    /// The exchange published to (`exchange`); it must exist, "" is the default exchange (the routing key then
    /// names a queue). Default: `directus`.
    package var exchange: String
    /// The routing key's template (`routing_key`); `{collection}` and `{event}` are replaced per event.
    /// Default: `{collection}.{event}`.
    package var routingKey: String
    /// A CA file (PEM) trusted instead of the system bundle for `amqps://` (`ca_file`). Default: none.
    package var caFile: String?
    /// Messages published and not confirmed at most (`max_in_flight`), 1…100,000. Default: 1000.
    package var maxInFlight: Int

    /// The default of `exchange`.
    package static let defaultExchange = "directus"
    /// The default of `routingKey`.
    package static let defaultRoutingKey = "{collection}.{event}"
    /// The default of `maxInFlight`.
    package static let defaultMaxInFlight = 1_000

    /// Creates a configuration with the defaults for everything but `url`.
    package init(
        url: String,
        exchange: String = AMQPSinkConfig.defaultExchange,
        routingKey: String = AMQPSinkConfig.defaultRoutingKey,
        caFile: String? = nil,
        maxInFlight: Int = AMQPSinkConfig.defaultMaxInFlight
    ) {
        self.url = url
        self.exchange = exchange
        self.routingKey = routingKey
        self.caFile = caFile
        self.maxInFlight = maxInFlight
    }

    /// The exchange.
    package var destination: String { exchange }

    /// `exchange` and `routing_key`.
    package var destinationYAMLLines: [String] {
        ["exchange: \(ConfigText.quoted(exchange))", "routing_key: \(ConfigText.quoted(routingKey))"]
    }

    /// The client's settings (the URL was checked when the file was read).
    package func clientSettings() throws(AMQPError) -> AMQPSettings {
        try AMQPSettings(url: url, caFile: caFile, maxInFlight: maxInFlight)
    }

    /// How `sinks` entries of `type: amqp` are read.
    package static let configType = SinkConfigType(
        name: "amqp",
        keys: keys(["exchange", "routing_key"]),
        decode: { decoder, map in decode(&decoder, map) }
    )

    /// AMQP's short strings (exchange names, routing keys) hold at most 255 bytes.
    static func checkShortString(_ text: String, what: String) throws(AMQPError) {
        guard text.utf8.count <= 255 else {
            throw AMQPError(kind: .configuration, message: "\(what) longer than 255 bytes")
        }
    }

    private static func decode(_ decoder: inout ConfigDecoder, _ map: MappingView) -> AMQPSinkConfig? {
        let server = decodeServer(
            &decoder,
            map,
            example: "amqp://user:password@host:5672/vhost",
            defaultMaxInFlight: defaultMaxInFlight,
            range: 1...100_000
        ) { url throws(AMQPError) in _ = try AMQPSettings(url: url) }
        var config = AMQPSinkConfig(url: server.url, caFile: server.caFile, maxInFlight: server.maxInFlight)
        // "" is a value here (the default exchange), not an absent key.
        if let node = map["exchange"] {
            config.exchange = decoder.string(map, "exchange") ?? ""
            do throws(AMQPError) {
                try checkShortString(config.exchange, what: "the exchange name is")
            } catch {
                decoder.report("\(map.field("exchange")): \(error.message)", at: node.mark)
            }
        }
        config.routingKey = EventNameTemplate.decode(
            config.routingKey, key: "routing_key", &decoder, map,
            refusal: "is not a usable routing key (at most 255 bytes)"
        ) { name throws(AMQPError) in try checkShortString(name, what: "the routing key is") }
        return server.isValid ? config : nil
    }
}
