import BridgeTestSupport
import Foundation
import Testing

/// Issue 23, item 9, through the real binary: `validate` says what the transport exposes for every client, without
/// failing and without showing a secret (`TransportPolicy`, unit-tested in BridgeCoreTests).
@Suite struct TransportPolicyEndToEndTests {
    @Test func validateWarnsAboutEveryClientsTransportRisks() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "transport-policy")
        let config = """
            directus:
              url: http://directus.example.com:8055
              auth:
                token: directus-secret-token
            subscriptions:
              - collection: articles
            delivery:
              state_dir: ./state
            sinks:
              - name: events
                type: kafka
                brokers: [kafka-1.example.com:9092]
                properties:
                  security.protocol: SASL_PLAINTEXT
                  sasl.mechanism: PLAIN
                  sasl.username: bridge
                  sasl.password: kafka-secret-password
                  enable.ssl.certificate.verification: "false"
              - name: stream
                type: jetstream
                servers: ["nats://bridge:nats-secret-password@nats-1.example.com:4222"]
            """
        try config.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let validate = try BridgeProcess(arguments: ["validate", "--config", "bridge.yaml"], directory: directory)
        #expect(validate.waitForExit() == 0, "\(validate.stderr)")
        #expect(validate.lines == ["ok"])
        let warnings = validate.stderr
        for field in [
            "directus.url", "sinks[0].properties.security.protocol",
            "sinks[0].properties.enable.ssl.certificate.verification", "sinks[1].servers",
        ] {
            #expect(warnings.contains("warning: \(field): "), "no warning for \(field): \(warnings)")
        }
        for secret in ["directus-secret-token", "kafka-secret-password", "nats-secret-password"] {
            #expect(!warnings.contains(secret), "\(secret) shown: \(warnings)")
        }
    }
}
