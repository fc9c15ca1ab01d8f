package import BridgeConfig
package import BridgeEvents

/// `type: ndjson`: one JSON line per change to stdout or a file.
package enum NDJSONSinkType: SinkType {
    package static var configType: SinkConfigType { NDJSONSinkConfig.configType }

    package static func makeConnector(_ settings: NDJSONSinkConfig, context: SinkContext) throws(RuntimeOutcome)
        -> any SinkConnector
    {
        let lines = context.registry.counter(
            "directus_bridge_lines_written_total", help: "NDJSON lines written.", labels: [("path", settings.path)])
        do {
            return try NDJSONSink(path: settings.path, fsync: settings.fsync, linesWritten: lines)
        } catch {
            throw .configurationProblem(error.description)
        }
    }

    /// Nothing to probe: the file is opened (and an unwritable path refused) when the bridge starts.
    package static func probe(_ settings: NDJSONSinkConfig, context: SinkProbeContext) async -> [CheckResult] { [] }
}
