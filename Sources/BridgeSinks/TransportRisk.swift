package import BridgeConfig
package import BridgeSystem

/// One thing the configured transport exposes (docs/RELIABILITY.md "Threat model"): credentials that travel
/// unencrypted to a host that is not a loopback address, or certificate or host-name verification switched off.
/// `TransportPolicy` collects them for every client; each sink type names its own (`SinkType.transportRisks`), with
/// `field` relative to its `sinks` entry, and the registration places it (`placed(inEntry:sink:)`).
package struct TransportRisk: Equatable, Sendable {
    /// The log message, the same for every instance of the risk.
    package var message: String
    /// The configuration field: `directus.url`, `sinks[2]`, `state.servers`; within a sink type, relative to its
    /// entry (`""` for the entry itself, `servers`, `properties.security.protocol`).
    package var field: String
    /// What to do about it.
    package var remedy: String
    /// Log metadata: the sink's id, the URL as shown (`scheme://host:port`), the header names.
    package var metadata: [String: String]

    /// Creates a risk.
    package init(message: String, field: String, remedy: String, metadata: [String: String]) {
        self.message = message
        self.field = field
        self.remedy = remedy
        self.metadata = metadata
    }

    /// The risk as `validate` and `check` print it.
    package var warning: ConfigWarning { ConfigWarning(field: field, detail: message, remedy: remedy) }

    /// Equal when everything printed and logged is: metadata values compare as the typed values they log.
    package static func == (lhs: TransportRisk, rhs: TransportRisk) -> Bool {
        lhs.message == rhs.message && lhs.field == rhs.field && lhs.remedy == rhs.remedy
            && lhs.metadata.mapValues(\.logValue) == rhs.metadata.mapValues(\.logValue)
    }

    /// The risk of a sink type placed in the configuration: its field under `entry` (`sinks[2]`), the sink's id in
    /// its metadata.
    package func placed(inEntry entry: String, sink id: String) -> TransportRisk {
        var risk = self
        risk.field = field.isEmpty ? entry : entry + "." + field
        risk.metadata[LogKey.sink] = id
        return risk
    }

    // MARK: - What the clients share

    /// Whether a connection to `host` exposes what it carries: no TLS and not a loopback address.
    package static func exposes(host: String, tls: Bool) -> Bool {
        !tls && !SocketAddress.isLoopback(host: host)
    }

    /// The host of `host:port`, `[v6]:port` or `scheme://host:port` (as `ShownURL` shows a URL).
    package static func host(ofAuthority text: String) -> String {
        var authority = Substring(text)
        if let scheme = authority.firstRange(of: "://") { authority = authority[scheme.upperBound...] }
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<close])
        }
        if let colon = authority.lastIndex(of: ":") { authority = authority[..<colon] }
        return String(authority)
    }

    /// A client whose URL carries its password (Redis, MQTT, AMQP): the password travels in the clear to a server that
    /// is not a loopback address unless the URL's scheme is the client's TLS one (`rediss`, `mqtts`, `amqps`). The
    /// field is `url`; `client` names the client in the message.
    package static func passwordInURL(_ url: String, secrets: [String], client: String, tlsScheme: String)
        -> [TransportRisk]
    {
        let shown = ShownURL.of(url)
        guard !secrets.isEmpty, !url.lowercased().hasPrefix(tlsScheme + "://"),
            exposes(host: host(ofAuthority: shown), tls: false)
        else { return [] }
        return [
            TransportRisk(
                message: "\(client) credentials are sent unencrypted (no TLS) to a non-loopback server",
                field: "url", remedy: "use a \(tlsScheme):// URL (with ca_file for a private CA)",
                metadata: [LogKey.url: shown])
        ]
    }

    /// A proxy's user and password (`directus.proxy`, a webhook sink's `proxy`), sent to it in the clear when it is
    /// not a loopback address: the tunnel is the proxy's, TLS runs inside it.
    package static func proxyCredentials(_ proxy: HTTPProxy?, field: String) -> [TransportRisk] {
        guard let proxy, proxy.user != nil, exposes(host: proxy.host, tls: false) else { return [] }
        return [
            TransportRisk(
                message: "proxy credentials are sent unencrypted (http://) to a non-loopback proxy",
                field: field, remedy: "use a proxy on a trusted network, or one without credentials",
                metadata: [LogKey.url: proxy.description])
        ]
    }

    /// NATS servers (a JetStream sink's, or `state.servers`): credentials (configured, or user information in a
    /// URL) to a `nats://` server that is not a loopback address, without TLS required (`tls://`, a CA file). The
    /// field is `servers`.
    package static func nats(servers: [String], credentials: Bool, tls: Bool) -> TransportRisk? {
        let plain = servers.filter { !$0.lowercased().hasPrefix("tls://") }
        let requiresTLS = tls || plain.count < servers.count  // one tls:// URL makes libnats require TLS for all
        let carriesCredentials = credentials || servers.contains { !URLCredentials.secrets(in: $0).isEmpty }
        guard carriesCredentials, !requiresTLS,
            plain.contains(where: { exposes(host: host(ofAuthority: ShownURL.of($0)), tls: false) })
        else { return nil }
        return TransportRisk(
            message: "NATS credentials are sent unencrypted (nats:// without TLS) to a non-loopback server",
            field: "servers", remedy: "use tls:// URLs (or a ca_file, which requires TLS)",
            metadata: [LogKey.url: servers.map(ShownURL.of).joined(separator: ",")])
    }
}
