/// How to connect to NATS: the servers of a cluster, credentials, TLS, and how to reconnect.
///
/// After the first connection, libnats reconnects to any server of the cluster (those listed here and those the
/// servers announce) forever, with `reconnectWait` plus jitter between rounds.
package struct NATSSettings: Sendable, Equatable {
    /// How the connection authenticates (at most one way).
    package enum Credentials: Sendable, Equatable {
        /// No credentials.
        case none
        /// A NATS `.creds` file (user JWT and NKey seed), read by libnats at each connect.
        case credentialsFile(String)
        /// A token.
        case token(String)
        /// A user name and password.
        case userPassword(user: String, password: String)
    }

    /// Server URLs (`nats://host:4222`, `tls://host:4222`). Required.
    package var servers: [String]
    /// How the connection authenticates. Default: none.
    package var credentials: Credentials
    /// A CA file (PEM) to verify the servers' certificates with; setting it also requires TLS. Default: none
    /// (TLS only for `tls://` URLs, verified against the system's CAs).
    package var caFile: String?
    /// Requires TLS for every server. Default: false.
    package var requireTLS: Bool
    /// The connection name servers show in their monitoring. Default: `directus-bridge`.
    package var name: String
    /// How long one connection attempt may take. Default: 2 s.
    package var connectTimeout: Duration
    /// The wait between reconnect rounds (plus up to 100 ms of jitter). Default: 250 ms.
    package var reconnectWait: Duration
    /// How often the client pings an idle server; two missed answers count as a lost connection. Default: 5 s.
    package var pingInterval: Duration

    /// Creates settings.
    package init(
        servers: [String],
        credentials: Credentials = .none,
        caFile: String? = nil,
        requireTLS: Bool = false,
        name: String = "directus-bridge",
        connectTimeout: Duration = .seconds(2),
        reconnectWait: Duration = .milliseconds(250),
        pingInterval: Duration = .seconds(5)
    ) {
        self.servers = servers
        self.credentials = credentials
        self.caFile = caFile
        self.requireTLS = requireTLS
        self.name = name
        self.connectTimeout = connectTimeout
        self.reconnectWait = reconnectWait
        self.pingInterval = pingInterval
    }

    /// The secrets of these settings (for a `Redactor`): the token or the password.
    package var secretValues: [String] {
        switch credentials {
        case .token(let token): [token]
        case .userPassword(_, let password): [password]
        case .none, .credentialsFile: []
        }
    }

    /// The server list without blanks; throws a configuration error when none is left.
    func validatedServers() throws(NATSError) -> [String] {
        let servers = servers.map { $0.filter { $0 != " " && $0 != "\t" } }.filter { !$0.isEmpty }
        guard !servers.isEmpty else {
            throw NATSError(kind: .configuration, message: "no NATS servers: list at least one nats://host:port")
        }
        return servers
    }
}
