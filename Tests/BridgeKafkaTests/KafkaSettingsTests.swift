import BridgeKafka
import Testing

/// Settings, errors and names: what is refused before anything reaches a broker, and how errors are told.
@Suite struct KafkaSettingsTests {
    /// Besides the delivery rule itself: `delivery.report.only.error` left every delivered message unreported, so a
    /// batch never completed and the sink's cursor never moved; `transactional.id` made every message fail with a
    /// retriable `_STATE` forever (the bridge opens no transactions); `enabled_events` would route delivery reports
    /// away from the callback the producer serves.
    @Test func reservedPropertiesAreRefusedByName() {
        for key in [
            "enable.idempotence", "acks", "bootstrap.servers", "message.timeout.ms", "delivery.report.only.error",
            "transactional.id", "enabled_events",
        ] {
            let settings = KafkaProducerSettings(bootstrapServers: ["127.0.0.1:9092"], properties: [key: "x"])
            let error = #expect(throws: KafkaError.self) { try KafkaProducer.make(settings: settings, logger: .silent) }
            #expect(error?.kind == .configuration)
            #expect(error?.message.contains(key) == true)
        }
    }

    @Test func unknownAndInvalidPropertiesNameTheKeyButNeverASecretValue() throws {
        let unknown = try #require(makeError(["no.such.property": "1"]))
        #expect(unknown.kind == .configuration && unknown.message.contains("no.such.property"))

        let invalid = try #require(makeError(["linger.ms": "not-a-number-4711"]))
        #expect(invalid.message.contains("linger.ms"))
        #expect(!invalid.message.contains("not-a-number-4711"), "\(invalid.message)")

        // rd_kafka_new refusing a TLS setup (a CA file that does not exist) next to a password.
        let tls = try #require(
            makeError([
                "security.protocol": "sasl_ssl", "sasl.mechanisms": "PLAIN", "sasl.username": "bridge",
                "sasl.password": "hunter2-password", "ssl.ca.location": "/nonexistent/ca.pem",
            ])
        )
        #expect(tls.kind == .configuration)
        #expect(!tls.description.contains("hunter2-password"), "\(tls)")
    }

    @Test func emptyServerListIsAConfigurationError() throws {
        let error = try #require(makeError([:], servers: [" ", ""]))
        #expect(error.kind == .configuration && error.message.contains("bootstrap"))
    }

    @Test func errorCodesAreClassifiedByWhatACallerCanDo() {
        #expect(KafkaError.Code.transport.description == "_TRANSPORT")
        #expect(KafkaError.Code.notLeaderForPartition.description == "NOT_LEADER_FOR_PARTITION")
        #expect(KafkaError.Code(rawValue: 4711).description == "ERR_4711")
        #expect(KafkaError.Code(rawValue: Int32.min).description == "ERR_-2147483648")
        #expect(KafkaError.kind(of: .topicAuthorizationFailed) == .authentication)
        #expect(KafkaError.kind(of: .saslAuthenticationFailed) == .authentication)
        #expect(KafkaError.kind(of: .authentication) == .authentication)
        #expect(KafkaError.kind(of: .outOfOrderSequenceNumber) == .fatal)
        #expect(KafkaError.kind(of: .fatal) == .fatal)
        #expect(KafkaError.kind(of: .messageSizeTooLarge) == .rejected)
        #expect(KafkaError.kind(of: .allBrokersDown) == .retriable)
        #expect(KafkaError.kind(of: .notLeaderForPartition) == .retriable)
        #expect(KafkaError.kind(of: KafkaError.Code(rawValue: 31_000)) == .retriable)
        #expect(KafkaError(kind: .retriable, message: "x").isRetriable)
        #expect(!KafkaError(kind: .authentication, message: "x").isRetriable)
        #expect(KafkaError(kind: .fatal, message: "x").requiresNewProducer)
    }

    @Test func secretPropertiesAreRecognised() {
        for key in [
            "sasl.password", "ssl.key.password", "ssl.keystore.password", "sasl.jaas.config", "ssl.key.pem",
            "sasl.oauthbearer.client.secret", "sasl.oauthbearer.config",
        ] {
            #expect(KafkaProducerSettings.isSecret(property: key), "\(key)")
        }
        for key in ["sasl.username", "security.protocol", "ssl.ca.location", "linger.ms"] {
            #expect(!KafkaProducerSettings.isSecret(property: key), "\(key)")
        }
    }

    private func makeError(_ properties: [String: String], servers: [String] = ["127.0.0.1:9"]) -> KafkaError? {
        do {
            _ = try KafkaProducer.make(
                settings: KafkaProducerSettings(bootstrapServers: servers, properties: properties),
                logger: .silent
            )
            return nil
        } catch {
            return error
        }
    }
}
