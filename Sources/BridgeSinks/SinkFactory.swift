package import BridgeConfig
package import BridgeSystem
package import BridgeEvents

/// One sink of this run: its connector, the filter of its `sinks` entry, and its stable id.
package struct ConfiguredSink: Sendable {
    /// The stable id (`SinkType.identity`): state and metric labels.
    package let id: String
    /// The connector.
    package let connector: any SinkConnector
    /// Which events it takes.
    package let filter: EventFilter

    /// The connector's name, for logs.
    package var name: String { connector.name }

    /// Creates the entry.
    package init(id: String, connector: any SinkConnector, filter: EventFilter) {
        self.id = id
        self.connector = connector
        self.filter = filter
    }
}

/// Builds the configured sinks through their registrations (`SinkCatalog`).
package enum SinkFactory {
    package static func makeSinks(
        _ configs: [SinkConfig],
        context base: SinkContext
    ) throws(RuntimeOutcome) -> [ConfiguredSink] {
        var sinks: [ConfiguredSink] = []
        for (index, config) in configs.enumerated() {
            guard let registration = SinkCatalog.registration(of: config) else {
                throw .configurationProblem("sinks[\(index)]: unknown sink type \"\(config.type)\"")
            }
            var context = base
            context.index = index
            context.sinkID = registration.identity(of: config, index: index)
            context.logger = base.logger.child(label: "sink", metadata: [LogKey.sink: context.sinkID])
            let connector = try registration.makeConnector(config, context: context)
            sinks.append(ConfiguredSink(id: context.sinkID, connector: connector, filter: EventFilter(config)))
        }
        return sinks
    }
}
