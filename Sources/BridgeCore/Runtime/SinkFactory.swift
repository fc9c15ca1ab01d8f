import BridgeConfig
import BridgeJSON
import BridgeSystem

/// Builds the configured sinks.
enum SinkFactory {
    static func makeSinks(_ configs: [SinkConfig], registry: MetricsRegistry, webhooks: WebhookDeliveries)
        throws(RuntimeOutcome) -> [any EventSink]
    {
        var sinks: [any EventSink] = []
        for (index, config) in configs.enumerated() {
            let filter = EventFilter(
                collections: Set(config.collections),
                events: Set(config.events.compactMap { ChangeEvent(rawValue: $0.rawValue) }))
            if let ndjson = config.settings(as: NDJSONSinkConfig.self) {
                let lines = registry.counter(
                    "directus_bridge_lines_written_total", help: "NDJSON lines written.",
                    labels: [("path", ndjson.path)])
                do {
                    sinks.append(
                        try NDJSONSink(path: ndjson.path, fsync: ndjson.fsync, filter: filter, linesWritten: lines))
                } catch {
                    throw .configurationProblem(error.description)
                }
            } else if let webhook = config.settings(as: WebhookSinkConfig.self) {
                sinks.append(try webhooks.makeSink(webhook, filter: filter, index: index))
            }
        }
        return sinks
    }
}
