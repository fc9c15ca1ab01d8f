/// One message to produce: topic, key, headers and value.
package struct KafkaMessage: Sendable, Equatable {
    /// The topic.
    package var topic: String
    /// The key: the default partitioner hashes it, so every message with the same key lands in one partition, in
    /// the order produced.
    package var key: String
    /// Headers, in order (Kafka allows repeated names).
    package var headers: [KafkaHeader]
    /// The value bytes.
    package var value: ArraySlice<UInt8>

    /// Creates a message.
    package init(topic: String, key: String, headers: [KafkaHeader] = [], value: [UInt8]) {
        self.topic = topic
        self.key = key
        self.headers = headers
        self.value = value[...]
    }
}

/// A message header. Values are text here: the bridge's headers (`id`, `type`, `collection`, `event`) all are.
package struct KafkaHeader: Sendable, Equatable {
    /// The header name.
    package var name: String
    /// The header value, sent as its UTF-8 bytes.
    package var value: String

    /// Creates a header.
    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// What became of one produced message.
package enum KafkaDeliveryOutcome: Sendable {
    /// The broker has it (with `acks=all`: every in-sync replica has it), at this partition and offset.
    case delivered(partition: Int32, offset: Int64)
    /// It was not delivered; the error says whether sending it again makes sense.
    case failed(KafkaError)

    /// Whether the message was delivered.
    package var isDelivered: Bool {
        if case .delivered = self { return true }
        return false
    }

    /// The error, when not delivered.
    package var error: KafkaError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}

/// A topic as the cluster describes it (`KafkaProducer.describeTopic`).
package struct KafkaTopicDescription: Sendable, Equatable {
    /// The topic name.
    package var name: String
    /// Its number of partitions.
    package var partitionCount: Int
    /// Brokers the cluster reported.
    package var brokerCount: Int
}

/// The producer's connection health, for logs, metrics and readiness.
package struct KafkaProducerStatus: Sendable {
    /// The last error librdkafka reported about the cluster (all brokers down, authentication failed, a fatal
    /// error), cleared by the next successful delivery. nil while healthy.
    package var lastError: KafkaError?
    /// Messages produced and not yet reported.
    package var outstanding: Int
    /// Messages delivered since the producer was made.
    package var delivered: UInt64
    /// Messages reported failed since the producer was made.
    package var failed: UInt64
}
