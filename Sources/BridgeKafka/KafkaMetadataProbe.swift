internal import BridgeSystem
internal import CRdKafka

/// Asks the cluster about one topic (`KafkaProducer.describeTopic`): proves the cluster is reachable, the
/// credentials are accepted and the topic exists. Blocking; runs on the blocking executor.
enum KafkaMetadataProbe {
    /// Partition and broker counts the cluster may report before we stop believing it.
    static let maximumPartitions: Int32 = 1_000_000
    static let maximumBrokers: Int32 = 100_000

    /// The metadata of `topic`, or a typed error (retriable when the cluster did not answer in `timeout`).
    static func describe(topic: String, handle: KafkaHandle, timeout: Duration) throws(KafkaError)
        -> KafkaTopicDescription
    {
        guard let topicHandle = rd_kafka_topic_new(handle.pointer, topic, nil) else {
            throw KafkaError.from(code: rd_kafka_last_error().rawValue, context: "topic \(topic)")
        }
        defer { rd_kafka_topic_destroy(topicHandle) }
        let milliseconds = Int32(clamping: timeout.roundedUpMilliseconds)
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let code = rd_kafka_metadata(handle.pointer, 0, topicHandle, &metadata, max(1, milliseconds)).rawValue
        guard code == 0, let metadata else {
            throw KafkaError.from(
                code: code == 0 ? KafkaError.Code.timedOut.rawValue : code,
                context: "metadata of \(topic)"
            )
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        return try describe(topic: topic, in: metadata.pointee)
    }

    /// Reads `topic` out of the cluster's answer. Every count is the peer's and is range-checked before use.
    static func describe(topic: String, in metadata: rd_kafka_metadata) throws(KafkaError) -> KafkaTopicDescription {
        guard metadata.broker_cnt >= 0, metadata.broker_cnt <= maximumBrokers,
            metadata.topic_cnt >= 0, metadata.topic_cnt <= maximumPartitions
        else {
            throw KafkaError(kind: .retriable, message: "the cluster sent metadata with impossible counts")
        }
        guard metadata.topic_cnt > 0, let topics = metadata.topics else {
            throw KafkaError(
                kind: .retriable,
                code: .unknownTopicOrPartition,
                message: "topic \(topic) is not in the cluster's answer"
            )
        }
        for index in 0..<Int(metadata.topic_cnt) {
            let entry = topics[index]
            guard let name = entry.topic, String(cString: name) == topic else { continue }
            if entry.err.rawValue != 0 {
                throw KafkaError.from(code: entry.err.rawValue, context: "topic \(topic)")
            }
            guard entry.partition_cnt > 0, entry.partition_cnt <= maximumPartitions else {
                throw KafkaError(
                    kind: .retriable,
                    code: .unknownTopicOrPartition,
                    message: "topic \(topic) has no usable partitions (the cluster reported \(entry.partition_cnt))"
                )
            }
            return KafkaTopicDescription(
                name: topic,
                partitionCount: Int(entry.partition_cnt),
                brokerCount: Int(metadata.broker_cnt)
            )
        }
        throw KafkaError(
            kind: .retriable,
            code: .unknownTopicOrPartition,
            message: "topic \(topic) is not in the cluster's answer"
        )
    }
}
