package import BridgeConfig
internal import BridgeSystem
package import BridgeSinks

/// The one place that collects what the configured transport exposes, for every client the bridge has: Directus
/// (REST and socket share `directus.url`), each sink (its type names its risks, `SinkType.transportRisks`), and the
/// shared state's `state.servers`. `validate` prints its risks as warnings, `check` as warning rows, and `run` logs
/// them once at start (docs/RELIABILITY.md "Threat model"). A risk never stops the bridge: a test rig or a private
/// network may want exactly this.
///
/// Two kinds of risk:
/// - credentials that travel unencrypted to a host that is not a loopback address (`http://`, `ws://`, Kafka
///   `SASL_PLAINTEXT`, `nats://` without TLS);
/// - certificate or host-name verification switched off (`directus.tls.insecure_skip_verify`, Kafka
///   `enable.ssl.certificate.verification: false`, `ssl.endpoint.identification.algorithm: none`).
package enum TransportPolicy {
    /// One risk: a constant message (the log line), where it is configured, the fix, and log metadata.
    package typealias Risk = TransportRisk

    /// Every risk of `config`, Directus first, then the sinks in file order (each type names its own,
    /// `SinkType.transportRisks`), then the shared state.
    package static func risks(_ config: BridgeConfig) -> [Risk] {
        var risks = directus(config)
        let ids = SinkCatalog.identities(of: config.sinks)
        for (index, sink) in config.sinks.enumerated() {
            let registration = SinkCatalog.registration(of: sink)
            risks += registration?.transportRisks(of: sink, entry: "sinks[\(index)]", id: ids[index]) ?? []
        }
        return risks + StateBackends.make(config).transportRisks
    }

    /// Directus: REST and socket share `directus.url`.
    private static func directus(_ config: BridgeConfig) -> [Risk] {
        var risks: [Risk] = []
        let url = config.directus.url
        if config.directus.auth.credentials != .none && TransportRisk.exposes(host: url.host, tls: url.isTLS) {
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
        return risks + TransportRisk.proxyCredentials(config.directus.proxy, field: "directus.proxy")
    }
}
