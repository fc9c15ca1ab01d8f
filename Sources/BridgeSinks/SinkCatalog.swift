package import BridgeConfig
package import BridgeEvents

/// Every sink type the bridge has, registered once: adding a type is new files plus one line here.
package enum SinkCatalog {
    /// The registered types.
    package static let registrations: [SinkRegistration] = [
        SinkRegistration(NDJSONSinkType.self),
        SinkRegistration(WebhookSinkType.self),
        SinkRegistration(JetStreamSinkType.self),
        SinkRegistration(KafkaSinkType.self),
        SinkRegistration(AMQPSinkType.self),
        SinkRegistration(RedisSinkType.self),
        SinkRegistration(MQTTSinkType.self),
    ]

    /// How each type reads its `sinks` entries (passed to `ConfigLoader`).
    package static let configTypes: [SinkConfigType] = registrations.map(\.configType)

    /// The stable id of each of `sinks` (their state, log field and metric labels), in order: its `name`, else its
    /// positional id.
    package static func identities(of sinks: [SinkConfig]) -> [String] {
        sinks.enumerated().map { index, sink in sink.name ?? positionalIdentity(of: sink, index: index) }
    }

    /// Where the named `sinks` kept their saved progress before they had a name (each one's positional id), for the
    /// stores to move it to the names at start.
    package static func renames(of sinks: [SinkConfig]) -> SinkRenames {
        var former: [String: String] = [:]
        for (index, sink) in sinks.enumerated() {
            if let name = sink.name { former[name] = positionalIdentity(of: sink, index: index) }
        }
        return SinkRenames(formerIDs: former, configured: Set(identities(of: sinks)))
    }

    private static func positionalIdentity(of sink: SinkConfig, index: Int) -> String {
        registration(of: sink)?.positionalIdentity(of: sink, index: index)
            ?? SinkIdentity.id(index: index, type: sink.type, target: sink.settings.summary)
    }

    /// Whether any of `sinks` keeps state of its own in `delivery.state_dir`.
    package static func keepLocalState(_ sinks: [SinkConfig]) -> Bool {
        sinks.contains { registration(of: $0)?.keepsLocalState ?? false }
    }

    /// The registration of `sink`'s type (nil only for a type the catalog does not know, which the config
    /// decoder refuses).
    package static func registration(of sink: SinkConfig) -> SinkRegistration? {
        registrations.first { $0.handles(sink) }
    }
}
