extension BridgeConfig {
    /// Every warning about the configuration, in file order: each sink's (`SinkSettings.warnings(field:)`).
    public var warnings: [ConfigWarning] {
        sinks.enumerated().flatMap { index, sink in sink.settings.warnings(field: "sinks[\(index)]") }
    }
}
