package import BridgeSystem

/// How to reach one Redis server: `redis://[user[:password]@]host[:port][/db]` or `rediss://…` for TLS.
///
/// A password alone (`redis://:secret@host`) authenticates as the default user (`AUTH password`); a user and
/// password use an ACL user (`AUTH user password`, Redis 6+). TLS verifies the server against the system's CAs plus
/// `caFile`, as the bridge's other clients do. Sentinel and Cluster are not supported (docs/configuration.md).
package struct RedisSettings: Sendable, Equatable {
    /// The parsed URL.
    package var url: ServiceURL
    /// A PEM file of CA certificates trusted in addition to the system store (`rediss://` only). Default: none.
    package var caFile: String?
    /// How long connecting (TCP, TLS, `AUTH`, `SELECT`) may take. Default: 5 s.
    package var connectTimeout: Duration
    /// How long the client waits for the next reply while some are outstanding; a server that accepts and never
    /// answers fails a pipeline after this long. Default: 10 s.
    package var replyTimeout: Duration
    /// The most commands written and not yet answered on the connection. Default: 1,000.
    package var maxInFlight: Int

    /// Parses `url` and checks the settings; throws a configuration error saying what is wrong.
    package init(
        url: String,
        caFile: String? = nil,
        connectTimeout: Duration = .seconds(5),
        replyTimeout: Duration = .seconds(10),
        maxInFlight: Int = 1_000
    ) throws(RedisError) {
        do {
            self.url = try ServiceURL(url, defaultPorts: ["redis": 6379, "rediss": 6379])
        } catch {
            throw RedisError(kind: .configuration, message: error.message)
        }
        self.caFile = caFile
        self.connectTimeout = connectTimeout
        self.replyTimeout = replyTimeout
        self.maxInFlight = maxInFlight
        guard (1...1_000_000).contains(maxInFlight) else {
            throw RedisError(kind: .configuration, message: "max in flight must be 1...1000000")
        }
        guard database != nil else {
            throw RedisError(
                kind: .configuration,
                message: "the path of \(self.url) must be a database number (0 to 1000000), or empty"
            )
        }
    }

    /// Whether the connection uses TLS (`rediss://`).
    package var usesTLS: Bool { url.scheme == "rediss" }

    /// The database number the URL's path names (0 when it names none); nil when the path is not one.
    package var database: Int? {
        let path = url.path.hasSuffix("/") ? String(url.path.dropLast()) : url.path
        if path.isEmpty { return 0 }
        guard path.utf8.count <= 7, path.utf8.allSatisfy({ (48...57).contains($0) }), let number = Int(path),
            number <= 1_000_000
        else { return nil }
        return number
    }

    /// The secrets of these settings (for a `Redactor`): the password.
    package var secretValues: [String] { url.password.map { [$0] } ?? [] }
}
