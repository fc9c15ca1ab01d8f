import BridgeConfig
import BridgeCore
import BridgeEvents
import BridgeDirectus
import BridgeActivity
import BridgeSinks
import Testing

/// `type: jetstream` entries: defaults, credentials (one way at most, secrets redacted), subject templates.
@Suite struct JetStreamSinkConfigTests {
    func yaml(_ lines: [String]) -> String {
        let entry = (["- type: jetstream"] + lines).map { "  \($0)\n" }.joined()
        return minimalYAML.replacingOnce("  - type: ndjson\n", with: entry)
    }

    func jetstream(_ lines: [String], files: InMemoryFiles = InMemoryFiles()) throws -> JetStreamSinkConfig? {
        try config(yaml(lines), files: files).sinks.first?.settings(as: JetStreamSinkConfig.self)
    }

    @Test func defaultsFollowTheContract() throws {
        let sink = try #require(try jetstream(["  servers: [\"nats://127.0.0.1:4222\"]"]))
        #expect(sink == JetStreamSinkConfig(servers: ["nats://127.0.0.1:4222"]))
        #expect(sink.subject == "directus.{collection}.{event}")
        #expect(sink.credentials == .none && sink.maxOutstanding == 10_000 && sink.ackTimeout == .seconds(5))
        #expect(sink.summary == "jetstream:nats://127.0.0.1:4222/directus.{collection}.{event}")
    }

    @Test func everyKeyIsRead() throws {
        let files = InMemoryFiles(["/etc/nats/ca.pem": "-----BEGIN CERTIFICATE-----", "/run/pw": "hunter2\n"])
        let sink = try #require(
            try jetstream(
                [
                    "  servers: [\"tls://a:4222\", \"tls://b:4222\"]", "  subject: \"cdc.{collection}.x.{event}\"",
                    "  user: bridge", "  password_file: /run/pw", "  ca_file: /etc/nats/ca.pem",
                    "  max_outstanding: 500", "  ack_timeout: 2s",
                ],
                files: files))
        #expect(sink.servers == ["tls://a:4222", "tls://b:4222"] && sink.subject == "cdc.{collection}.x.{event}")
        #expect(sink.credentials == .userPassword(user: "bridge", password: "hunter2"))
        #expect(sink.secrets == ["hunter2"] && !sink.yamlLines.joined().contains("hunter2"))
        #expect(sink.caFile == "/etc/nats/ca.pem" && sink.maxOutstanding == 500 && sink.ackTimeout == .seconds(2))
    }

    @Test func tokenIsASecretAndOnlyOneWayOfAuthenticating() throws {
        let sink = try #require(try jetstream(["  servers: [\"nats://h:4222\"]", "  token: s3cret-token"]))
        #expect(sink.credentials == .token("s3cret-token") && sink.secrets == ["s3cret-token"])
        #expect(sink.yamlLines.contains("token: \"[REDACTED]\""))
        let both = issues(yaml(["  servers: [\"nats://h:4222\"]", "  token: t", "  user: u", "  password: p"]))
        #expect(both.count == 1 && both[0].contains("set one of credentials_file, token or user+password"), "\(both)")
        let alone = issues(yaml(["  servers: [\"nats://h:4222\"]", "  user: u"]))
        #expect(alone.count == 1 && alone[0].contains("\"user\" and \"password\" go together"), "\(alone)")
        let missing = issues(yaml(["  servers: [\"nats://h:4222\"]", "  credentials_file: /nowhere.creds"]))
        #expect(missing.count == 1 && missing[0].contains("cannot read \"/nowhere.creds\""), "\(missing)")
    }

    @Test func serversAreRequiredAndAreURLs() {
        let none = issues(yaml(["  subject: a.b"]))
        #expect(none.count == 1 && none[0].contains("missing required key \"servers\""), "\(none)")
        let empty = issues(yaml(["  servers: []"]))
        #expect(empty.count == 1 && empty[0].contains("list at least one server"), "\(empty)")
        let bare = issues(yaml(["  servers: [\"127.0.0.1:4222\"]"]))
        #expect(bare.count == 1 && bare[0].contains("must start with nats:// or tls://"), "\(bare)")
        for bad in [
            "nats://k:99999", "nats://k:0", "nats://:4222", "nats://", "nats://k:4222,nats://j:4222", "nats:// k:4222",
            "nats://k:4222/path", "tls://k:4222?x=1", "nats://u:pw@:4222",
        ] {
            let found = issues(yaml(["  servers: [\"\(bad)\"]"]))
            #expect(found.count == 1 && found[0].contains("is not a NATS server URL"), "\(bad): \(found)")
            #expect(!found.joined().contains("pw@"), "\(found)")
        }
        for good in ["nats://k", "nats://k:4222", "tls://nats-1.example.com:4443", "nats://u:pw@k:4222", "nats://[::1]:4222",
                     "nats://tok@10.0.0.1"] {
            #expect(issues(yaml(["  servers: [\"\(good)\"]"])) == ["<valid>"], "\(good)")
        }
    }

    @Test func subjectTemplatesAreChecked() {
        for bad in ["directus.>", "directus.*.{event}", "directus..{event}", "has space.{event}"] {
            let found = issues(yaml(["  servers: [\"nats://h:4222\"]", "  subject: \"\(bad)\""]))
            #expect(found.count == 1 && found[0].contains("is not a NATS subject"), "\(bad): \(found)")
        }
        let typo = issues(yaml(["  servers: [\"nats://h:4222\"]", "  subject: \"directus.{colection}\""]))
        #expect(typo.count == 1 && typo[0].contains("unknown placeholder \"{colection}\""), "\(typo)")
    }

    /// `yaml(lines)` subscribed to `collections` (in this order) instead of `articles` alone.
    func yaml(_ lines: [String], subscribing collections: [String]) -> String {
        let subscriptions = collections.map { "  - collection: \"\($0)\"\n" }.joined()
        return yaml(lines).replacingOnce("  - collection: articles\n", with: subscriptions)
    }

    /// The subject is rendered for every collection the sink takes, the default template included: a collection
    /// name with a space, a wildcard token or letters beyond ASCII gives no publishable subject, and every event of
    /// that collection would have been rejected and passed over at run time, with `validate` saying ok.
    @Test func theSubjectOfEverySubscribedCollectionIsChecked() {
        for collection in ["blog posts", "*", ">", "Über"] {
            for subject in [[], ["  subject: \"cdc.{collection}.{event}\""]] {
                let found = issues(
                    yaml(["  servers: [\"nats://h:4222\"]"] + subject, subscribing: ["articles", collection]))
                #expect(found.count == 1, "\(collection) \(subject): \(found)")
                #expect(found.first?.contains("is not a NATS subject") == true, "\(found)")
                #expect(found.first?.contains("for collection \"\(collection)\"") == true, "\(found)")
            }
            let filtered = ["  servers: [\"nats://h:4222\"]", "  collections: [articles]"]
            #expect(issues(yaml(filtered, subscribing: ["articles", collection])) == ["<valid>"], "\(collection)")
            let fixed = ["  servers: [\"nats://h:4222\"]", "  subject: cdc.{event}"]
            #expect(issues(yaml(fixed, subscribing: ["articles", collection])) == ["<valid>"], "\(collection)")
        }
    }
}
