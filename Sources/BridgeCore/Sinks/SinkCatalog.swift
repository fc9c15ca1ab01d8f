package import BridgeConfig

/// Every sink type the bridge has, registered once: adding a type is new files plus one line here.
package enum SinkCatalog {
    /// How each type reads its `sinks` entries (passed to `ConfigLoader`).
    package static let configTypes: [SinkConfigType] = [
        NDJSONSinkConfig.configType,
        WebhookSinkConfig.configType,
    ]
}
