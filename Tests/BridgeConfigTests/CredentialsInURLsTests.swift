import BridgeConfig
import BridgeSinks
import Testing

/// Credentials written into a URL never reach a message, the effective-configuration dump, a sink's summary (logs,
/// `status`, metric labels) or `check`; the log redactor knows them. Before, a JetStream server
/// `nats://bob:natspw@host` was logged in every line naming the sink, printed by `status` and `check`, and a
/// refused webhook URL was echoed whole in the refusal.
@Suite struct CredentialsInURLsTests {
    @Test func theSecretPartOfTheUserInformationIsFoundAndRedacted() {
        #expect(URLCredentials.secrets(in: "nats://bob:pw@h:4222") == ["pw"])
        #expect(URLCredentials.secrets(in: "nats://tok3n@h:4222") == ["tok3n"])
        #expect(URLCredentials.secrets(in: "nats://h:4222/a@b").isEmpty)
        #expect(URLCredentials.secrets(in: "nats://bob:@h").isEmpty)
        #expect(URLCredentials.redacted("nats://bob:pw@h:4222") == "nats://bob:[REDACTED]@h:4222")
        #expect(URLCredentials.redacted("nats://tok3n@h") == "nats://[REDACTED]@h")
        #expect(URLCredentials.redacted("nats://a:b@c@h") == "nats://a:[REDACTED]@h")
        #expect(URLCredentials.redacted("http://h/p?token=t") == "http://h/p?token=t")
    }

    @Test func aRefusedURLIsNotEchoedWithItsCredentialsOrQuery() {
        let webhook = minimalYAML.replacingOnce(
            "  - type: ndjson\n", with: "  - type: webhook\n    url: http://alice:s3cretpw@h/hook?token=qtoken123\n")
        let directus = minimalYAML.replacingOnce(
            "url: http://127.0.0.1:8055", with: "url: https://alice:s3cretpw@h?token=qtoken123")
        for yaml in [webhook, directus] {
            let found = issues(yaml)
            #expect(found.count == 1)
            #expect(found.first?.contains("must not contain credentials") == true, "\(found)")
            #expect(found.first?.contains("http") == true, "\(found)")
            #expect(!found.joined().contains("s3cretpw") && !found.joined().contains("qtoken123"), "\(found)")
        }
    }

    @Test func stateServerCredentialsAreSecretsAndHiddenEverywhereShown() throws {
        let yaml = minimalYAML + "delivery: { mode: activity }\nstate:\n  backend: jetstream\n"
            + "  servers: [\"nats://bob:natspw@127.0.0.1:4222\", \"nats://tok3n@127.0.0.1:4223\"]\n"
        let parsed = try config(yaml)
        #expect(parsed.allSecrets.contains("natspw") && parsed.allSecrets.contains("tok3n"))
        #expect(parsed.state.shownServers == "nats://127.0.0.1:4222,nats://127.0.0.1:4223")
        #expect(!parsed.description.contains("natspw") && !parsed.description.contains("tok3n"))
        let refused = issues(
            minimalYAML + "delivery: { mode: activity }\nstate:\n  backend: jetstream\n  servers: [\"natss://bob:natspw@h\"]\n")
        #expect(refused.count == 1 && !refused.joined().contains("natspw"), "\(refused)")
    }

    @Test func jetStreamServerCredentialsAreSecretsAndHiddenEverywhereShown() throws {
        let yaml = minimalYAML.replacingOnce(
            "  - type: ndjson\n",
            with: "  - type: jetstream\n    servers: [\"nats://bob:natspw@127.0.0.1:4222\"]\n    subject: a.b\n")
        let settings = try #require(try config(yaml).sinks.first?.settings as? JetStreamSinkConfig)
        #expect(settings.secrets.contains("natspw"))
        #expect(settings.summary == "jetstream:nats://127.0.0.1:4222/a.b")
        #expect(!settings.yamlLines.joined().contains("natspw"))
        #expect(try config(yaml).allSecrets.contains("natspw"))
        let refused = issues(yaml.replacingOnce("nats://bob", with: "natss://bob"))
        #expect(refused.count == 1 && !refused.joined().contains("natspw"), "\(refused)")
    }
}
