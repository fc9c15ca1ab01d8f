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

    /// The registration of `sink`'s type (nil only for a type the catalog does not know, which the config
    /// decoder refuses).
    package static func registration(of sink: SinkConfig) -> SinkRegistration? {
        registrations.first { $0.handles(sink) }
    }
}
