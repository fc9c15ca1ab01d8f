package import BridgeConfig
package import BridgeSystem
internal import BridgeEvents
internal import BridgeDirectus
internal import BridgeActivity
internal import BridgeSinks

/// Warnings logged once by `run` at start-up about what the configuration exposes (docs/RELIABILITY.md, "Files
/// and transport"): the transport risks of every client (`TransportPolicy`), and state or output files that other
/// users can read.
package enum StartupWarnings {
    /// One warning: a constant message and its metadata.
    package struct Warning: Equatable {
        /// The log message.
        package var message: String
        /// The log metadata (URLs, names, paths, modes).
        package var metadata: LogMetadata

        /// Equal when the message and the typed values logged are.
        package static func == (lhs: Warning, rhs: Warning) -> Bool {
            lhs.message == rhs.message && lhs.metadata.mapValues(\.logValue) == rhs.metadata.mapValues(\.logValue)
        }
    }

    /// Every start-up warning for `config`.
    package static func all(_ config: BridgeConfig) -> [Warning] {
        transport(config) + looseFileModes(config)
    }

    /// The transport risks `TransportPolicy` finds (credentials sent unencrypted, verification switched off).
    package static func transport(_ config: BridgeConfig) -> [Warning] {
        TransportPolicy.risks(config).map { Warning(message: $0.message, metadata: $0.metadata) }
    }

    /// State and output files the bridge keeps that group or others can access (they hold event bodies): the
    /// bridge creates them 0700/0600 but leaves existing ones as they are.
    package static func looseFileModes(_ config: BridgeConfig) -> [Warning] {
        let stateDir = config.delivery.stateDir
        var paths = [
            stateDir, StateDirectory.join(stateDir, CursorDatabase.fileName),
            StateDirectory.join(stateDir, OutboxStore.fileName),
        ]
        for sink in config.sinks {
            if let ndjson = sink.settings(as: NDJSONSinkConfig.self), ndjson.path != "-" { paths.append(ndjson.path) }
        }
        return paths.compactMap { path in
            guard let mode = PrivateFile.looseMode(path) else { return nil }
            return Warning(
                message: "a state or output file is accessible to other users; the bridge creates them 0700/0600",
                metadata: [LogKey.path: path, "mode": "0" + String(mode, radix: 8)]
            )
        }
    }

}
