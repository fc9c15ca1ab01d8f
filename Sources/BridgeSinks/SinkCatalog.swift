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
    ]

    /// How each type reads its `sinks` entries (passed to `ConfigLoader`).
    package static let configTypes: [SinkConfigType] = registrations.map(\.configType)

    /// The stable id of each of `sinks` (their state and metric labels), in order.
    package static func identities(of sinks: [SinkConfig]) -> [String] {
        sinks.enumerated().map { index, sink in
            registration(of: sink)?.identity(of: sink, index: index)
                ?? SinkIdentity.id(index: index, type: sink.type, target: sink.settings.summary)
        }
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
