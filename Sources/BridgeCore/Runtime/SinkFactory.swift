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
            switch config {
            case .ndjson(let ndjson):
                let filter = EventFilter(
                    collections: Set(ndjson.collections),
                    events: Set(ndjson.events.compactMap { ChangeEvent(rawValue: $0.rawValue) }))
                let policy = NDJSONSink.FsyncPolicy(rawValue: ndjson.fsync.rawValue) ?? .interval
                let lines = registry.counter(
                    "directus_bridge_lines_written_total", help: "NDJSON lines written.",
                    labels: [("path", ndjson.path)])
                do {
                    sinks.append(try NDJSONSink(path: ndjson.path, fsync: policy, filter: filter, linesWritten: lines))
                } catch {
                    throw .configurationProblem(error.description)
                }
            case .webhook(let webhook):
                sinks.append(try webhooks.makeSink(webhook, index: index))
            }
        }
        return sinks
    }
}
