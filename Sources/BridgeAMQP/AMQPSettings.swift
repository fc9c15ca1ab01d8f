package import BridgeSystem

/// How to reach one RabbitMQ (AMQP 0-9-1) broker: `amqp://[user[:password]@]host[:port][/vhost]`, `amqps://` for
/// TLS.
///
/// As in RabbitMQ's URI spec, the path is the percent-encoded vhost (`/` itself is `%2F`); no path is the default
/// vhost `/`, no credentials are `guest`/`guest`. TLS verifies the broker against `caFile`, else the system's CA
/// bundle; librabbitmq 0.11 matches the certificate's DNS names only, so an `amqps://` URL names the broker by a
/// host name its certificate holds, not by an IP address.
package struct AMQPSettings: Sendable, Equatable {
    /// The parsed URL.
    package var url: ServiceURL
    /// The vhost.
    package var vhost: String
    /// A PEM file of the CA certificates to trust instead of the system bundle (`amqps://` only). Default: none.
    package var caFile: String?
    /// How long connecting (TCP, TLS, login, channel, confirm.select) may take. Default: 5 s.
    package var connectTimeout: Duration
    /// The most messages published and not yet confirmed. Default: 1,000.
    package var maxInFlight: Int
    /// The heartbeat interval asked for (whole seconds; 0 none). Default: 30 s.
    package var heartbeat: Duration

    /// Parses `url` and checks the settings; throws a configuration error saying what is wrong.
    package init(
        url: String,
        caFile: String? = nil,
        connectTimeout: Duration = .seconds(5),
        maxInFlight: Int = 1_000,
        heartbeat: Duration = .seconds(30)
    ) throws(AMQPError) {
        do {
            self.url = try ServiceURL(url, defaultPorts: ["amqp": 5672, "amqps": 5671])
        } catch {
            throw AMQPError(kind: .configuration, message: error.message)
        }
        guard let vhost = self.url.decodedPath, !vhost.contains("/") || self.url.path == "%2F" || vhost == "/" else {
            throw AMQPError(kind: .configuration, message: "the path of \(self.url) must be one percent-encoded vhost")
        }
        self.vhost = vhost.isEmpty ? "/" : vhost
        guard (1...1_000_000).contains(maxInFlight) else {
            throw AMQPError(kind: .configuration, message: "max in flight must be 1...1000000")
        }
        self.caFile = caFile
        self.connectTimeout = connectTimeout
        self.maxInFlight = maxInFlight
        self.heartbeat = heartbeat
    }

    /// Whether the connection uses TLS (`amqps://`).
    package var usesTLS: Bool { url.scheme == "amqps" }

    /// The user (`guest` when the URL has none).
    package var user: String { url.user ?? "guest" }

    /// The password (`guest` when the URL has none).
    package var password: String { url.password ?? "guest" }

    /// The secrets of these settings (for a `Redactor`): the password.
    package var secretValues: [String] { url.password.map { [$0] } ?? [] }
}
