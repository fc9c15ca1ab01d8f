extension BridgeConfig {
    /// Every warning about the configuration, in file order: each sink's missing `name`, then its settings'
    /// (`SinkSettings.warnings(field:)`).
    public var warnings: [ConfigWarning] {
        sinks.enumerated().flatMap { index, sink in
            let field = "sinks[\(index)]"
            let unnamed =
                sink.name != nil
                ? []
                : [
                    ConfigWarning(
                        field: field,
                        detail: "a sink without a name: its id comes from its position and target, so moving or "
                            + "changing the entry orphans its cursor, outbox and dead letters",
                        remedy: "set name (a-z, 0-9, _ and -); the next start keeps its saved progress under the name")
                ]
            return unnamed + sink.settings.warnings(field: field)
        }
    }
}
