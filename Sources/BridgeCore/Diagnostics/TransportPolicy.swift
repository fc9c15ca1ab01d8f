package import BridgeConfig
package import BridgeSystem
import BridgeSinks
import BridgeNATS

/// The one place that decides what the configured transport exposes, for every client the bridge has: Directus
/// (REST and socket share `directus.url`), webhooks, Kafka and NATS JetStream sinks, and the shared state's
/// `state.servers`. `validate` prints its risks as warnings, `check` as warning rows, and `run` logs them once at
/// start (docs/RELIABILITY.md "Threat model"). A risk never stops the bridge: a test rig or a private network may
/// want exactly this.
///
/// Two kinds of risk:
/// - credentials that travel unencrypted to a host that is not a loopback address (`http://`, `ws://`, Kafka
///   `SASL_PLAINTEXT`, `nats://` without TLS);
/// - certificate or host-name verification switched off (`directus.tls.insecure_skip_verify`, Kafka
///   `enable.ssl.certificate.verification: false`, `ssl.endpoint.identification.algorithm: none`).
package enum TransportPolicy {
    /// One risk: a constant message (the log line), where it is configured, the fix, and log metadata.
    package struct Risk: Equatable, Sendable {
        /// The log message, the same for every instance of the risk.
        package var message: String
        /// The configuration field: `directus.url`, `sinks[2]`, `state.servers`.
        package var field: String
        /// What to do about it.
        package var remedy: String
        /// Log metadata: the sink's id, the URL as shown (`scheme://host:port`), the header names.
        package var metadata: [String: String]

        /// The risk as `validate` and `check` print it.
        package var warning: ConfigWarning { ConfigWarning(field: field, detail: message, remedy: remedy) }

        /// Equal when everything printed and logged is: metadata values compare as the typed values they log.
        package static func == (lhs: Risk, rhs: Risk) -> Bool {
            lhs.message == rhs.message && lhs.field == rhs.field && lhs.remedy == rhs.remedy
                && lhs.metadata.mapValues(\.logValue) == rhs.metadata.mapValues(\.logValue)
        }
    }

    /// Every risk of `config`, Directus first, then the sinks in file order, then the shared state.
    package static func risks(_ config: BridgeConfig) -> [Risk] {
        var risks = directus(config)
        let ids = SinkCatalog.identities(of: config.sinks)
        for (index, sink) in config.sinks.enumerated() {
            let field = "sinks[\(index)]"
            if let webhook = sink.settings(as: WebhookSinkConfig.self) {
                risks += self.webhook(webhook, field: field, id: ids[index])
            } else if let kafka = sink.settings(as: KafkaSinkConfig.self) {
                risks += self.kafka(kafka, field: field, id: ids[index])
            } else if let jetStream = sink.settings(as: JetStreamSinkConfig.self) {
                let credentials = jetStream.credentials != .none
                if let risk = nats(jetStream.servers, credentials: credentials, tls: jetStream.caFile != nil) {
                    risks.append(withSink(risk, field: field, id: ids[index]))
                }
            }
        }
        return risks + StateBackends.make(config).transportRisks
    }

    // MARK: - Clients

    private static func directus(_ config: BridgeConfig) -> [Risk] {
        var risks: [Risk] = []
        let url = config.directus.url
        if config.directus.auth.credentials != .none && exposes(host: url.host, tls: url.isTLS) {
            risks.append(
                Risk(
                    message: "Directus credentials are sent unencrypted (http://, ws://) to a non-loopback host",
                    field: "directus.url", remedy: "use https:// (the socket then uses wss://)",
                    metadata: [LogKey.url: url.shown]))
        }
        if config.directus.tls.insecureSkipVerify {
            risks.append(
                Risk(
                    message: "TLS certificate verification is OFF (directus.tls.insecure_skip_verify)",
                    field: "directus.tls.insecure_skip_verify",
                    remedy: "trust the server's CA with directus.tls.ca_file instead",
                    metadata: [LogKey.url: url.shown]))
        }
        return risks
    }

    private static func webhook(_ webhook: WebhookSinkConfig, field: String, id: String) -> [Risk] {
        guard exposes(host: webhook.url.host, tls: webhook.url.isTLS) else { return [] }
        let carriers = webhook.headers.filter(\.isSensitive).map(\.name)
        guard !carriers.isEmpty || webhook.url.query != nil else { return [] }
        return [
            Risk(
                message: "webhook credentials (URL query, headers) are sent unencrypted to a non-loopback host",
                field: field, remedy: "use an https:// URL",
                metadata: [LogKey.sink: id, LogKey.url: webhook.url.shown, "headers": carriers.joined(separator: ",")])
        ]
    }

    private static func kafka(_ kafka: KafkaSinkConfig, field: String, id: String) -> [Risk] {
        let shown = kafka.brokers.map(ShownURL.of).joined(separator: ",")
        let property = { (name: String) in kafka.properties[name]?.lowercased() ?? "" }
        var risks: [Risk] = []
        let remote = kafka.brokers.contains { exposes(host: host(ofAuthority: $0), tls: false) }
        if property("security.protocol") == "sasl_plaintext" && remote {
            risks.append(
                Risk(
                    message: "Kafka SASL credentials are sent unencrypted (security.protocol SASL_PLAINTEXT) to a "
                        + "non-loopback broker",
                    field: field + ".properties.security.protocol", remedy: "use SASL_SSL",
                    metadata: [LogKey.sink: id, LogKey.url: shown]))
        }
        if ["false", "0", "no", "off"].contains(property("enable.ssl.certificate.verification")) {
            risks.append(
                Risk(
                    message: "TLS certificate verification is OFF (enable.ssl.certificate.verification)",
                    field: field + ".properties.enable.ssl.certificate.verification",
                    remedy: "remove it; trust the brokers' CA with ssl.ca.location",
                    metadata: [LogKey.sink: id, LogKey.url: shown]))
        }
        if property("ssl.endpoint.identification.algorithm") == "none" {
            risks.append(
                Risk(
                    message: "TLS host name verification is OFF (ssl.endpoint.identification.algorithm: none)",
                    field: field + ".properties.ssl.endpoint.identification.algorithm",
                    remedy: "remove it (the default, https, checks the broker's name against its certificate)",
                    metadata: [LogKey.sink: id, LogKey.url: shown]))
        }
        return risks
    }

    /// NATS servers: credentials (configured, or user information in a URL) to a `nats://` server that is not a
    /// loopback address, without TLS required (`tls://`, a CA file).
    package static func nats(_ servers: [String], credentials: Bool, tls: Bool) -> Risk? {
        let plain = servers.filter { !$0.lowercased().hasPrefix("tls://") }
        let requiresTLS = tls || plain.count < servers.count  // one tls:// URL makes libnats require TLS for all
        let carriesCredentials = credentials || servers.contains { !URLCredentials.secrets(in: $0).isEmpty }
        guard carriesCredentials, !requiresTLS,
            plain.contains(where: { exposes(host: host(ofAuthority: ShownURL.of($0)), tls: false) })
        else { return nil }
        return Risk(
            message: "NATS credentials are sent unencrypted (nats:// without TLS) to a non-loopback server",
            field: "servers", remedy: "use tls:// URLs (or a ca_file, which requires TLS)",
            metadata: [LogKey.url: servers.map(ShownURL.of).joined(separator: ",")])
    }

    // MARK: - Helpers

    private static func withSink(_ risk: Risk, field: String, id: String) -> Risk {
        var risk = risk
        risk.field = field + "." + risk.field
        risk.metadata[LogKey.sink] = id
        return risk
    }

    private static func exposes(host: String, tls: Bool) -> Bool {
        !tls && !SocketAddress.isLoopback(host: host)
    }

    /// The host of `host:port`, `[v6]:port` or `scheme://host:port` (as `ShownURL` shows a URL).
    private static func host(ofAuthority text: String) -> String {
        var authority = Substring(text)
        if let scheme = authority.firstRange(of: "://") { authority = authority[scheme.upperBound...] }
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        if let colon = authority.lastIndex(of: ":") { authority = authority[..<colon] }
        return String(authority)
    }
}
