import BridgeSystem

extension BridgeConfig: CustomStringConvertible {
    /// The effective configuration as YAML, every default filled in and every secret shown as `[REDACTED]`:
    /// for `validate --print`-style output and start-up debug logs. Strings are JSON-quoted, so the dump parses
    /// back as YAML (with the secrets replaced).
    public var description: String {
        var lines: [String] = []
        if let directus = directusSection {
            lines += directusLines(directus)
        } else {
            lines.append("# directus: not read (ConfigScope.withoutDirectus)")
        }
        lines.append("subscriptions:")
        for subscription in subscriptions {
            lines.append("  - collection: \(quoted(subscription.collection))")
            lines.append("    uid: \(quoted(subscription.uid))")
            lines.append("    events: \(list(subscription.events.map(\.rawValue)))")
            if let query = subscription.query { lines.append("    query: \(ConfigText.query(query))") }
            lines.append("    snapshot: \(subscription.snapshot)")
        }
        lines.append("delivery:")
        lines.append("  mode: \(delivery.mode.rawValue)")
        lines.append("  poll_interval: \(format(delivery.pollInterval))")
        lines.append("  state_dir: \(quoted(delivery.stateDir))")
        lines.append("  max_queue: \(delivery.maxQueue)")
        lines.append("  max_queue_bytes: \(ByteSizeText.format(delivery.maxQueueBytes))")
        lines.append("sinks:")
        for sink in sinks { lines += describe(sink) }
        lines.append("http:")
        lines.append("  listen: \(quoted(http.listen?.description ?? ""))")
        lines.append("log:")
        lines.append("  level: \(log.level)")
        lines.append("  format: \(log.format.rawValue)")
        lines.append("  stats_interval: \(format(log.statsInterval))")
        lines.append("  progress_interval: \(format(log.progressInterval))")
        lines.append("state:")
        lines.append("  backend: \(state.backend.rawValue)")
        lines.append("  servers: \(list(state.servers.map { quoted(URLCredentials.redacted($0)) }))")
        lines.append("  bucket: \(quoted(state.bucket))")
        lines.append("  name: \(quoted(state.name))")
        lines.append("  lease: \(format(state.lease))")
        lines.append("shutdown_timeout: \(format(shutdownTimeout))")
        return lines.joined(separator: "\n")
    }

    private static let redacted = ConfigText.redacted

    /// The `directus` section's lines.
    private func directusLines(_ directus: DirectusConfig) -> [String] {
        var lines: [String] = []
        lines.append("directus:")
        lines.append("  url: \(quoted(directus.url.description))")
        lines.append("  websocket_path: \(quoted(directus.websocketPath))  # \(directus.websocketURL)")
        lines.append("  auth:")
        switch directus.auth.credentials {
        case .token: lines.append("    token: \(Self.redacted)")
        case .login(let email, _, let otp):
            lines.append("    email: \(quoted(email))")
            lines.append("    password: \(Self.redacted)")
            if otp != nil { lines.append("    otp: \(Self.redacted)") }
        case .none: break
        }
        lines.append("    mode: \(directus.auth.mode.rawValue)")
        lines.append("  tls:")
        lines.append("    ca_file: \(quoted(directus.tls.caFile ?? ""))")
        lines.append("    insecure_skip_verify: \(directus.tls.insecureSkipVerify)")
        lines.append("  connect_timeout: \(format(directus.connectTimeout))")
        lines.append("  request_timeout: \(format(directus.requestTimeout))")
        lines.append("  heartbeat: \(format(directus.heartbeat))")
        lines.append("  reconnect:")
        lines.append("    initial_delay: \(format(directus.reconnect.initialDelay))")
        lines.append("    max_delay: \(format(directus.reconnect.maxDelay))")
        lines.append("    reset_after: \(format(directus.reconnect.resetAfter))")
        if let proxy = directus.proxy {
            lines.append("  proxy: \(ConfigText.proxy(proxy))")
        }
        return lines
    }

    private func describe(_ sink: SinkConfig) -> [String] {
        var lines = ["  - type: \(sink.type)"]
        if let name = sink.name { lines = ["  - name: \(quoted(name))", "    type: \(sink.type)"] }
        lines += sink.settings.yamlLines.map { "    " + $0 }
        lines.append("    collections: [\(sink.collections.map(quoted).joined(separator: ", "))]")
        lines.append("    events: \(list(sink.events.map(\.rawValue)))")
        lines.append("    format: \(sink.format.rawValue)")
        return lines
    }

    private func quoted(_ text: String) -> String { ConfigText.quoted(text) }

    private func list(_ items: [String]) -> String { ConfigText.list(items) }

    private func format(_ duration: Duration) -> String { ConfigText.duration(duration) }
}
