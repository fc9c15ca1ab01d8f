extension BridgeConfig {
    /// Every warning about the configuration, in file order: each sink's missing `name`, then its settings'
    /// (`SinkSettings.warnings(field:)`).
    public var warnings: [ConfigWarning] {
        var warnings: [ConfigWarning] = []
        for (index, sink) in sinks.enumerated() {
            let field = "sinks[\(index)]"
            if sink.name == nil {
                warnings.append(
                    ConfigWarning(
                        field: field,
                        detail: "a sink without a name: its id comes from its position and target, so moving or "
                            + "changing the entry gives it a new id, which repeats events and leaves its outbox and "
                            + "dead letters behind",
                        remedy: "set name (a-z, 0-9, _ and -): its next start keeps its saved progress under the "
                            + "name"))
            }
            warnings += sink.settings.warnings(field: field)
        }
        return warnings
    }
}
