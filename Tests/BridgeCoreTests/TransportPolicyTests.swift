import BridgeConfig
import Testing

@testable import BridgeCore
@testable import BridgeSinks

/// Issue 23, item 9: one transport policy for every client. Credentials sent unencrypted and verification switched
/// off are warned about the same way for Directus, webhooks, Kafka, NATS JetStream sinks and `state.servers`, by
/// `validate`, `check` and `run` alike (each takes `TransportPolicy.risks`).
@Suite struct TransportPolicyTests {
    private func config(directus: String = "url: https://d.example.com\n  auth:\n    token: t", sinks: String,
        state: String = "") throws -> BridgeConfig
    {
        let text = """
            directus:
              \(directus)
            subscriptions:
              - collection: articles
            delivery:
              state_dir: /nonexistent-bridge-state
            sinks:
            \(sinks)
            \(state)
            """
        switch ConfigLoader.parse(text: text, path: "test.yaml", environment: [:], sinkTypes: SinkCatalog.configTypes) {
        case .success(let config): return config
        case .failure(let error): throw ConfigFixture.Failed(issues: error.description)
        }
    }

    private func kafka(_ brokers: String, _ properties: String) -> String {
        """
          - name: k
            type: kafka
            brokers: [\(brokers)]
            properties:
        \(properties)
        """
    }

    @Test func kafkaSASLPlaintextToARemoteBrokerWarns() throws {
        let remote = try config(sinks: kafka("kafka-1.example.com:9092", "      security.protocol: SASL_PLAINTEXT"))
        let risks = TransportPolicy.risks(remote)
        #expect(risks.map(\.field) == ["sinks[0].properties.security.protocol"])
        #expect(risks.first?.message.contains("unencrypted") == true)
        #expect(risks.first?.metadata["sink"]?.logValue.text == "k")
        let local = try config(sinks: kafka("127.0.0.1:9092", "      security.protocol: sasl_plaintext"))
        #expect(TransportPolicy.risks(local).isEmpty)
        let tls = try config(sinks: kafka("kafka-1.example.com:9092", "      security.protocol: SASL_SSL"))
        #expect(TransportPolicy.risks(tls).isEmpty)
    }

    @Test func proxyCredentialsToARemoteProxyWarn() throws {
        let ndjson = "  - type: ndjson"
        let remote = try config(
            directus: "url: https://d.example.com\n  proxy: http://ops:pw@proxy.example.com:3128\n  auth:\n    token: t",
            sinks: ndjson)
        let risks = TransportPolicy.risks(remote)
        #expect(risks.map(\.field) == ["directus.proxy"])
        #expect(risks.first?.message == "proxy credentials are sent unencrypted (http://) to a non-loopback proxy")
        #expect(risks.first?.metadata["directus.url"]?.logValue.text == "http://proxy.example.com:3128")
        for quiet in ["http://proxy.example.com:3128", "http://ops:pw@127.0.0.1:3128"] {
            let config = try config(
                directus: "url: https://d.example.com\n  proxy: \(quiet)\n  auth:\n    token: t", sinks: ndjson)
            #expect(TransportPolicy.risks(config).isEmpty, "\(quiet)")
        }
    }

    @Test(arguments: ["false", "0", "FALSE"])
    func kafkaVerificationSwitchedOffWarns(value: String) throws {
        let properties = """
                  security.protocol: SSL
                  enable.ssl.certificate.verification: "\(value)"
                  ssl.endpoint.identification.algorithm: none
            """
        let risks = TransportPolicy.risks(try config(sinks: kafka("127.0.0.1:9093", properties)))
        #expect(
            risks.map(\.field) == [
                "sinks[0].properties.enable.ssl.certificate.verification",
                "sinks[0].properties.ssl.endpoint.identification.algorithm",
            ])
        #expect(risks.allSatisfy { $0.message.contains("verification is OFF") })
    }

    @Test func natsCredentialsOverPlainNATSToARemoteServerWarn() throws {
        let sink = { (servers: String, extra: String) in
            "  - name: js\n    type: jetstream\n    servers: [\(servers)]\n" + extra
        }
        let token = try config(sinks: sink("nats://nats-1.example.com:4222", "    token: secret"))
        #expect(TransportPolicy.risks(token).map(\.field) == ["sinks[0].servers"])
        let inURL = try config(sinks: sink("\"nats://u:p@nats-1.example.com:4222\"", ""))
        #expect(TransportPolicy.risks(inURL).count == 1)
        #expect(TransportPolicy.risks(inURL).allSatisfy { !"\($0.metadata)".contains("u:p") })
        #expect(TransportPolicy.risks(try config(sinks: sink("tls://nats-1.example.com:4222", "    token: s"))).isEmpty)
        #expect(TransportPolicy.risks(try config(sinks: sink("nats://127.0.0.1:4222", "    token: s"))).isEmpty)
        #expect(TransportPolicy.risks(try config(sinks: sink("nats://nats-1.example.com:4222", ""))).isEmpty)
    }

    /// Found reviewing the policy's move into the sink types: Redis's `redis://user:password@host` sent its AUTH in
    /// the clear to a remote server without a word, while every other client warned.
    @Test func redisCredentialsOverPlainRedisToARemoteServerWarn() throws {
        let sink = { (url: String) in "  - name: r\n    type: redis\n    url: \"\(url)\"" }
        let remote = try config(sinks: sink("redis://bridge:s3cret@redis-1.example.com:6379/0"))
        let risks = TransportPolicy.risks(remote)
        #expect(risks.map(\.field) == ["sinks[0].url"])
        #expect(risks.first?.metadata["sink"] == "r")
        #expect(risks.allSatisfy { !"\($0)".contains("s3cret") })
        #expect(TransportPolicy.risks(try config(sinks: sink("redis://:s3cret@redis-1.example.com:6379"))).count == 1)
        #expect(TransportPolicy.risks(try config(sinks: sink("rediss://bridge:s3cret@redis-1.example.com"))).isEmpty)
        #expect(TransportPolicy.risks(try config(sinks: sink("redis://bridge:s3cret@127.0.0.1:6379"))).isEmpty)
        #expect(TransportPolicy.risks(try config(sinks: sink("redis://redis-1.example.com:6379"))).isEmpty)
    }

    /// The MQTT and AMQP sinks carry their password in the URL as Redis does: warned the same way.
    @Test(arguments: [("mqtt", "mqtts", "topic: t"), ("amqp", "amqps", "exchange: x")])
    func mqttAndAMQPCredentialsWithoutTLSToARemoteServerWarn(type: String, tls: String, extra: String) throws {
        let sink = { (url: String) in "  - name: b\n    type: \(type)\n    url: \"\(url)\"\n    \(extra)" }
        let risks = TransportPolicy.risks(try config(sinks: sink("\(type)://bridge:s3cret@broker.example.com")))
        #expect(risks.map(\.field) == ["sinks[0].url"])
        #expect(risks.first?.message.hasPrefix(type.uppercased()) == true)
        #expect(risks.allSatisfy { !"\($0)".contains("s3cret") })
        #expect(TransportPolicy.risks(try config(sinks: sink("\(tls)://bridge:s3cret@broker.example.com"))).isEmpty)
        #expect(TransportPolicy.risks(try config(sinks: sink("\(type)://bridge:s3cret@127.0.0.1"))).isEmpty)
        #expect(TransportPolicy.risks(try config(sinks: sink("\(type)://broker.example.com"))).isEmpty)
    }

    /// A webhook sink's proxy with a user and password: warned as `directus.proxy` is, under the entry's `proxy`.
    @Test func aWebhookProxyWithCredentialsOffLoopbackWarns() throws {
        let sink = { (proxy: String) in
            "  - name: w\n    type: webhook\n    url: https://hooks.example.com/h\n    secret: s\n    proxy: \(proxy)"
        }
        let risks = TransportPolicy.risks(try config(sinks: sink("http://u:pr0xy@proxy.example.com:3128")))
        #expect(risks.map(\.field) == ["sinks[0].proxy"])
        #expect(risks.allSatisfy { !"\($0)".contains("pr0xy") })
        #expect(TransportPolicy.risks(try config(sinks: sink("http://u:pr0xy@127.0.0.1:3128"))).isEmpty)
        #expect(TransportPolicy.risks(try config(sinks: sink("http://proxy.example.com:3128"))).isEmpty)
    }

    @Test func stateServersWithCredentialsOverPlainNATSWarn() throws {
        let state = "state:\n  backend: jetstream\n  servers: [\"nats://bridge:pw@nats-1.example.com:4222\"]"
        let risks = TransportPolicy.risks(try config(sinks: "  - type: ndjson", state: state))
        #expect(risks.map(\.field) == ["state.servers"])
        #expect(risks.first?.metadata["directus.url"]?.logValue.text == "nats://nats-1.example.com:4222")
        let tls = "state:\n  backend: jetstream\n  servers: [\"tls://bridge:pw@nats-1.example.com:4222\"]"
        #expect(TransportPolicy.risks(try config(sinks: "  - type: ndjson", state: tls)).isEmpty)
    }

    @Test func directusVerificationSwitchedOffIsARiskOfThePolicy() throws {
        let insecure = "url: https://d.example.com\n  auth:\n    token: t\n  tls:\n    insecure_skip_verify: true"
        let risks = TransportPolicy.risks(try config(directus: insecure, sinks: "  - type: ndjson"))
        #expect(risks.map(\.field) == ["directus.tls.insecure_skip_verify"])
        #expect(risks.first?.warning.detail.contains("verification is OFF") == true)
    }
}
