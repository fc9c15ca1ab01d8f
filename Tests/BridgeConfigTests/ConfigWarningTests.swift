import BridgeConfig
import Testing

/// `BridgeConfig.warnings`: what `validate` and `check` warn about without failing.
@Suite struct ConfigWarningTests {
    /// `minimalYAML` with a webhook sink after its NDJSON sink; `secret` is the webhook's secret line, if any.
    /// Both sinks are named, so that only the warning under test is given.
    func yaml(secret: String?) -> String {
        let webhook =
            "  - name: hook\n    type: webhook\n    url: https://hooks.example.com/directus\n"
            + (secret.map { "    \($0)\n" } ?? "")
        return minimalYAML.replacingOnce("  - type: ndjson\n", with: "  - name: out\n    type: ndjson\n" + webhook)
    }

    @Test func aWebhookWithoutASecretIsUnsigned() throws {
        let warnings = try config(yaml(secret: nil)).warnings
        #expect(warnings.map(\.field) == ["sinks[1]"])
        #expect(warnings.first?.detail.contains("deliveries are unsigned") == true)
        #expect(warnings.first?.remedy.contains("secret_file") == true)
        // `${WEBHOOK_SECRET:-}` left empty means unsigned too (docs/configuration.md, environment variables).
        #expect(try config(yaml(secret: "secret: ${WEBHOOK_SECRET:-}")).warnings.map(\.field) == ["sinks[1]"])
    }

    @Test func aSignedWebhookAndAnNDJSONSinkAreNotWarnedAbout() throws {
        #expect(try config(yaml(secret: "secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")).warnings.isEmpty)
        let named = minimalYAML.replacingOnce("  - type: ndjson", with: "  - name: out\n    type: ndjson")
        #expect(try config(named).warnings.isEmpty)
    }
}
