package import BridgeConfig
package import BridgeSystem
package import BridgeEvents
package import BridgeDirectus
package import BridgeActivity
package import BridgeSinks

/// Warnings logged once by `run` at start-up about what the configuration exposes (docs/RELIABILITY.md, "Files
/// and transport"): credentials that travel unencrypted beyond this machine, and state or output files that
/// other users can read.
package enum StartupWarnings {
    /// One warning: a constant message and its metadata.
    package struct Warning: Equatable {
        /// The log message.
        package var message: String
        /// The log metadata (every value text: URLs, names, paths, modes).
        package var metadata: [String: String]
    }

    /// Every start-up warning for `config`.
    package static func all(_ config: BridgeConfig) -> [Warning] {
        plaintextCredentials(config) + looseFileModes(config)
    }

    /// Credentials sent over `http://` or `ws://` to a host that is not a loopback address: the Directus token or
    /// login (REST and the socket share the URL's scheme), and webhook sinks whose URL carries a query (often a
    /// token) or that have a credential header (`HTTPHeader.isSensitive`, the ones redacted from logs).
    package static func plaintextCredentials(_ config: BridgeConfig) -> [Warning] {
        var warnings: [Warning] = []
        let directus = config.directus.url
        if config.directus.auth.credentials != .none && exposes(directus) {
            warnings.append(
                Warning(
                    message: "Directus credentials are sent unencrypted (http://, ws://) to a non-loopback host",
                    metadata: [LogKey.url: directus.shown]
                ))
        }
        let ids = SinkCatalog.identities(of: config.sinks)
        for (index, sink) in config.sinks.enumerated() {
            guard let webhook = sink.settings(as: WebhookSinkConfig.self), exposes(webhook.url) else { continue }
            let carriers = webhook.headers.filter(\.isSensitive).map(\.name)
            guard !carriers.isEmpty || webhook.url.query != nil else { continue }
            warnings.append(
                Warning(
                    message: "webhook credentials (URL query, headers) are sent unencrypted to a non-loopback host",
                    metadata: [
                        LogKey.sink: ids[index], LogKey.url: webhook.url.shown,
                        "headers": carriers.joined(separator: ","),
                    ]
                ))
        }
        return warnings
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

    private static func exposes(_ url: HTTPURL) -> Bool {
        !url.isTLS && !SocketAddress.isLoopback(host: url.host)
    }
}
