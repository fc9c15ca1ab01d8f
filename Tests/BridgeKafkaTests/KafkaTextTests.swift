import Testing

@testable import BridgeKafka

/// Text from librdkafka and brokers: cleaned, bounded, and never carrying a secret value.
@Suite struct KafkaTextTests {
    @Test func refusalsOfSecretPropertiesShowNoReasonAndOthersLoseTheirValue() {
        let reason = Array("Invalid value \"hunter2-secret\" for configuration property \"x\"".utf8CString)
        #expect(KafkaSettingsText.refusal(reason, key: "sasl.password", value: "hunter2-secret") == "")
        let shown = KafkaSettingsText.refusal(reason, key: "linger.ms", value: "hunter2-secret")
        #expect(!shown.contains("hunter2-secret") && shown.contains("Invalid value"))
    }

    @Test func topicNamesFollowKafkasRule() {
        for good in ["events", "directus.articles", "a-b_c.9", String(repeating: "x", count: 249)] {
            #expect(throws: Never.self) { try KafkaTopicName.validate(good) }
        }
        for bad in ["", ".", "..", "with space", "slash/", "ünïcode", String(repeating: "x", count: 250)] {
            #expect(throws: KafkaError.self) { try KafkaTopicName.validate(bad) }
        }
    }
}
