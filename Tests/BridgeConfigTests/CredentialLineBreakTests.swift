import BridgeConfig
import Testing

/// Issue 23, item 6: a credential holding CR, LF or NUL would end the header it travels in and start one the value
/// chose (`token_file` with `abcdefgh\r\nX-Injected: yes` was sent as an injected header), or cut a C string. Every
/// configured credential is refused when the file is read (exit 78), by key, never showing the value.
@Suite struct CredentialLineBreakTests {
    static let injected = "abcdefgh\r\nX-Injected: yes"

    /// The issues of `yaml` (its `sinks:` entries replaced by `sinks`), with the injected value never shown.
    private func refusals(_ yaml: String, files: InMemoryFiles = InMemoryFiles()) -> [String] {
        let found = issues(yaml, files: files)
        #expect(!found.joined().contains("abcdefgh") && !found.joined().contains("X-Injected"), "\(found)")
        return found
    }

    private func withAuth(_ lines: [String]) -> String {
        minimalYAML.replacingOnce("    token: secret-token\n", with: lines.map { "    \($0)\n" }.joined())
    }

    private func withSinks(_ lines: [String]) -> String {
        minimalYAML.replacingOnce("  - type: ndjson\n", with: lines.map { "  \($0)\n" }.joined())
    }

    private let message = "must be one line: it holds a line break (CR or LF) or NUL; the value is not shown"

    @Test func directusCredentialsFromTheFileOrAFileAreRefusedByKey() {
        let files = InMemoryFiles(["/run/token": Self.injected + "\n", "/run/pw": "pass\u{0}word\n"])
        #expect(
            refusals(withAuth(["token_file: /run/token"]), files: files) == [
                "bridge.yaml:4:17: directus.auth.token_file \(message)"
            ])
        #expect(
            refusals(withAuth([#"token: "abcdefgh\r\nX-Injected: yes""#])) == [
                "bridge.yaml:4:12: directus.auth.token \(message)"
            ])
        #expect(
            refusals(withAuth(["email: a@b.c", "password_file: /run/pw"]), files: files) == [
                "bridge.yaml:5:20: directus.auth.password_file \(message)"
            ])
        #expect(
            refusals(withAuth([#"email: "a@b.c\nX-Injected: yes""#, "password: pw"])) == [
                "bridge.yaml:4:12: directus.auth.email \(message)"
            ])
        #expect(
            refusals(withAuth(["email: a@b.c", "password: pw", #"otp: "12\r\n34""#])) == [
                "bridge.yaml:6:10: directus.auth.otp \(message)"
            ])
    }

    @Test func sinkCredentialsAreRefusedByKey() {
        #expect(
            refusals(withSinks(["- type: webhook", "  url: https://hooks.example.com/x", #"  secret: "abcdefgh\nX""#]))
                == ["bridge.yaml:10:13: sinks[0].secret \(message)"])
        #expect(
            refusals(
                withSinks([
                    "- type: jetstream", "  servers: [\"nats://127.0.0.1:4222\"]", "  user: bridge",
                    #"  password: "abcdefgh\r\nX-Injected: yes""#,
                ])) == ["bridge.yaml:11:15: sinks[0].password \(message)"])
        #expect(
            refusals(
                withSinks([
                    "- type: jetstream", "  servers: [\"nats://127.0.0.1:4222\"]", #"  token: "abc\u0000defgh""#,
                ]))
                == ["bridge.yaml:10:12: sinks[0].token \(message)"])
        let kafka = refusals(
            withSinks([
                "- type: kafka", "  brokers: [\"127.0.0.1:9092\"]",
                "  properties: { sasl.mechanism: PLAIN, sasl.username: u, sasl.password: \"abcdefgh\\r\\nX\" }",
            ]))
        #expect(kafka.count == 1 && kafka.first?.contains("sinks[0].properties.sasl.password") == true, "\(kafka)")
    }

    @Test func credentialsInAServerURLAreRefusedWithoutShowingThem() {
        let state = refusals(
            minimalYAML + "delivery: { mode: activity }\nstate:\n  backend: jetstream\n"
                + "  servers: [\"nats://bob:abcdefgh\\r\\nX-Injected@127.0.0.1:4222\"]\n")
        #expect(state.count == 1 && state.first?.contains("state.servers") == true, "\(state)")
    }
}
