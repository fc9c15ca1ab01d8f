import BridgeSystem
package import BridgeConfig
package import BridgeNATS
internal import BridgeEvents

/// A NATS JetStream sink (`type: jetstream`): each event is published to a subject that must fall into an existing
/// stream, with `Nats-Msg-Id` = the event id, and counts as delivered on its publish acknowledgement.
package struct JetStreamSinkConfig: SinkSettings, Equatable {
    /// How the connection authenticates (at most one way): `credentials_file`, `token` or `token_file`, `user` with
    /// `password` or `password_file` — the client's own cases.
    package typealias Credentials = NATSSettings.Credentials

    /// Server URLs of the cluster (`servers`), `nats://` or `tls://`. Required.
    package var servers: [String]
    /// The subject template (`subject`); `{collection}` and `{event}` are replaced per event.
    /// Default: `directus.{collection}.{event}`.
    package var subject: String
    /// How the connection authenticates. Default: none.
    package var credentials: Credentials
    /// A CA file (PEM) to verify the servers with (`ca_file`); setting it requires TLS. Default: none.
    package var caFile: String?
    /// Events published and not acknowledged at most (`max_outstanding`), 1…1,000,000. Default: 10000.
    package var maxOutstanding: Int
    /// How long one publish may wait for its acknowledgement before it is published again with the same
    /// `Nats-Msg-Id` (`ack_timeout`). Default: 5s.
    package var ackTimeout: Duration

    /// The default of `subject`.
    package static let defaultSubject = "directus.{collection}.{event}"
    /// The allowed range of `maxOutstanding`.
    package static let maxOutstandingRange: ClosedRange<Int> = 1...1_000_000
    /// The default of `maxOutstanding`.
    package static let defaultMaxOutstanding = 10_000
    /// The default of `ackTimeout`.
    package static let defaultAckTimeout: Duration = .seconds(5)

    /// Creates a configuration with the contract's defaults for everything but `servers`.
    package init(
        servers: [String],
        subject: String = JetStreamSinkConfig.defaultSubject,
        credentials: Credentials = .none,
        caFile: String? = nil,
        maxOutstanding: Int = JetStreamSinkConfig.defaultMaxOutstanding,
        ackTimeout: Duration = JetStreamSinkConfig.defaultAckTimeout
    ) {
        self.servers = servers
        self.subject = subject
        self.credentials = credentials
        self.caFile = caFile
        self.maxOutstanding = maxOutstanding
        self.ackTimeout = ackTimeout
    }

    /// The token or the password, and the credentials in any server URL.
    package var secrets: [String] {
        let configured: [String] =
            switch credentials {
            case .token(let token): [token]
            case .userPassword(_, let password): [password]
            case .none, .credentialsFile: []
            }
        return configured + servers.flatMap(URLCredentials.secrets(in:))
    }

    /// `servers` as shown in logs, `status` and `check`: `scheme://host:port` each (README.md, "How URLs are shown").
    package var shownServers: String { servers.map(ShownURL.of).joined(separator: ",") }

    /// Every subject the template can make, as a pattern: a token that holds a placeholder may be anything, so the
    /// streams must cover them all (`directus.{collection}.{event}` → `directus.*.*`).
    package var subjectPattern: String {
        subject.split(separator: ".", omittingEmptySubsequences: false)
            .map { $0.contains("{") ? "*" : String($0) }.joined(separator: ".")
    }

    /// `jetstream:nats://host:4222,nats://other:4222/<subject>`.
    package var summary: String { "jetstream:" + shownServers + "/" + subject }

    /// The summary as version 0.2 showed it (servers as written, a password in one redacted): the sink's id is its
    /// hash (`JetStreamSinkType.identity`), so it must not change with how servers are shown.
    package var identityTarget: String {
        "jetstream:" + servers.map { URLCredentials.redacted($0) }.joined(separator: ",") + "/" + subject
    }

    package var yamlLines: [String] {
        var lines = [
            "servers: \(ConfigText.list(servers.map { ConfigText.quoted(URLCredentials.redacted($0)) }))",
            "subject: \(ConfigText.quoted(subject))",
        ]
        switch credentials {
        case .none: break
        case .credentialsFile(let path): lines.append("credentials_file: \(ConfigText.quoted(path))")
        case .token: lines.append("token: \(ConfigText.redacted)")
        case .userPassword(let user, _):
            lines += ["user: \(ConfigText.quoted(user))", "password: \(ConfigText.redacted)"]
        }
        if let caFile { lines.append("ca_file: \(ConfigText.quoted(caFile))") }
        lines += [
            "max_outstanding: \(maxOutstanding)",
            "ack_timeout: \(ConfigText.duration(ackTimeout))",
        ]
        return lines
    }

    /// The connection settings of the NATS client.
    package var natsSettings: NATSSettings {
        NATSSettings(servers: servers, credentials: credentials, caFile: caFile)
    }

    /// How `sinks` entries of `type: jetstream` are read.
    package static let configType = SinkConfigType(
        name: "jetstream",
        keys: [
            "servers", "subject", "credentials_file", "token", "token_file", "user", "password", "password_file",
            "ca_file", "tls", "max_outstanding", "ack_timeout",
        ],
        decode: { decoder, map in decode(&decoder, map) }
    )

    private static func decode(_ decoder: inout ConfigDecoder, _ map: MappingView) -> JetStreamSinkConfig? {
        let present = decoder.requirePresent(map, "servers", hint: " (jetstream sinks need at least one server)")
        let servers = decoder.stringList(map, "servers")
        for server in servers {
            guard let issue = ServerAddress.natsURLIssue(server.text, field: map.field("servers")) else { continue }
            decoder.report(issue, at: server.mark)
        }
        if present, servers.isEmpty, let node = map["servers"] {
            decoder.report("\(map.field("servers")): list at least one server", at: node.mark)
        }
        var config = JetStreamSinkConfig(servers: servers.map(\.text))
        config.subject = EventNameTemplate.decode(
            config.subject, key: "subject", &decoder, map,
            refusal: "is not a NATS subject (dot-separated tokens without spaces or wildcards)"
        ) { name throws(NATSError) in try NATSSubject.validate(name) }
        config.credentials = credentials(&decoder, map)
        config.caFile = decoder.brokerCAFile(map)
        config.maxOutstanding = decoder.integer(
            map, "max_outstanding", default: defaultMaxOutstanding, range: maxOutstandingRange)
        config.ackTimeout = decoder.duration(
            map, "ack_timeout", default: defaultAckTimeout, atLeast: .milliseconds(100))
        return present && !servers.isEmpty ? config : nil
    }

    /// At most one way of authenticating: a credentials file, a token, or a user with a password.
    private static func credentials(_ decoder: inout ConfigDecoder, _ map: MappingView) -> Credentials {
        let file = decoder.string(map, "credentials_file")
        if let file, let node = map["credentials_file"] {
            decoder.checkLibraryFile(file, field: map.field("credentials_file"), at: node.mark)
        }
        let token = decoder.secret(map, "token", orFile: "token_file")
        let user = decoder.credential(map, "user")
        let password = decoder.secret(map, "password", orFile: "password_file")
        let ways = [file != nil, token != nil, user != nil || password != nil].filter { $0 }.count
        if ways > 1 {
            decoder.report(
                "\(map.name): set one of credentials_file, token or user+password, not several", at: map.mark)
        }
        if (user == nil) != (password == nil) {
            decoder.report("\(map.name): \"user\" and \"password\" go together", at: map.mark)
        }
        if let file { return .credentialsFile(file) }
        if let token { return .token(token) }
        if let user, let password { return .userPassword(user: user, password: password) }
        return .none
    }
}
