package import BridgeConfig
internal import BridgeSystem
package import BridgeEvents

/// One sink of this run: its connector, the filter and format of its `sinks` entry, and its stable id.
package struct ConfiguredSink: Sendable {
    /// The stable id (`SinkCatalog.identities`): state, log field `sink` and metric labels.
    package let id: String
    /// The connector.
    package let connector: any SinkConnector
    /// Which events it takes.
    package let filter: EventFilter
    /// How its events are written (`format`).
    package let encoder: EventEncoder

    /// Creates the entry.
    package init(id: String, connector: any SinkConnector, filter: EventFilter, encoder: EventEncoder = .plain) {
        self.id = id
        self.connector = connector
        self.filter = filter
        self.encoder = encoder
    }

    /// Hands `events` (already filtered) to the connector in the sink's format.
    package func accept(_ events: [EncodedEvent]) async throws(SinkError) {
        try await connector.accept(encoder.encode(events))
    }
}

/// Builds the configured sinks through their registrations (`SinkCatalog`).
package enum SinkFactory {
    /// The connectors of `configs`; `source` (the Directus URL) is the `source` of their CloudEvents.
    package static func makeSinks(
        _ configs: [SinkConfig],
        source: String,
        context base: SinkContext
    ) throws(RuntimeOutcome) -> [ConfiguredSink] {
        var sinks: [ConfiguredSink] = []
        var base = base
        base.renames = SinkCatalog.renames(of: configs)
        for (index, config) in configs.enumerated() {
            guard let registration = SinkCatalog.registration(of: config) else {
                throw .configurationProblem("sinks[\(index)]: unknown sink type \"\(config.type)\"")
            }
            var context = base
            context.index = index
            context.sinkID = registration.identity(of: config, index: index)
            context.encoder = EventEncoder(format: config.format, source: source)
            context.logger = base.logger.child(label: "sink", metadata: [LogKey.sink: context.sinkID])
            let connector = try registration.makeConnector(config, context: context)
            sinks.append(
                ConfiguredSink(
                    id: context.sinkID, connector: connector, filter: EventFilter(config), encoder: context.encoder))
        }
        return sinks
    }
}
