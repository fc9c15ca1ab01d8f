internal import BridgeSystem
internal import CRdKafka

/// What a `KafkaProducer` must release, in order: the poll thread, the topic handles, the librdkafka handle — and
/// the callbacks' context, which must outlive the handle.
final class KafkaProducerResources: @unchecked Sendable {
    // @unchecked: used by one thread at a time. The producer's task uses `topicHandle`; `release()` runs once, on the
    // blocking executor, from `close()` (after which the producer no longer produces) or from the producer's deinit.
    private let handle: KafkaHandle
    private let pollThread: KafkaPollThread
    private let context: KafkaProducerContext
    private var topics: [String: OpaquePointer] = [:]
    /// The topic handle used last: a sink's messages mostly go to one topic in a row (no hashing per message).
    private var lastTopic: (name: String, handle: OpaquePointer)?
    private var released = false

    init(handle: KafkaHandle, pollThread: KafkaPollThread, context: KafkaProducerContext) {
        self.handle = handle
        self.pollThread = pollThread
        self.context = context
    }

    /// The librdkafka topic handle for `name`, made once and kept until release (a bridge produces to the few
    /// topics its templates name). Invalid names are refused without reaching librdkafka.
    func topicHandle(_ name: String) -> Result<OpaquePointer, KafkaError> {
        if let lastTopic, lastTopic.name == name { return .success(lastTopic.handle) }
        if let existing = topics[name] {
            lastTopic = (name, existing)
            return .success(existing)
        }
        do {
            try KafkaTopicName.validate(name)
        } catch {
            return .failure(error)
        }
        guard let made = rd_kafka_topic_new(handle.pointer, name, nil) else {
            return .failure(KafkaError.from(code: rd_kafka_last_error().rawValue, context: "topic \(name)"))
        }
        topics[name] = made
        lastTopic = (name, made)
        return .success(made)
    }

    /// Who serves the delivery reports (the poll thread, or the runner in its turn).
    var serving: KafkaReportServing { pollThread.serving }

    /// Purges what librdkafka still holds, serves the purge's delivery reports (so every batch completes and gives
    /// back its retain of itself), then destroys the handles. Blocks for up to about a second.
    /// Idempotent.
    func release() {
        guard !released else { return }
        released = true
        _ = rd_kafka_purge(handle.pointer, Int32(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT))
        pollThread.stop()
        var rounds = 0
        while rd_kafka_outq_len(handle.pointer) > 0 && rounds < 100 {
            rd_kafka_poll(handle.pointer, 10)
            rounds += 1
        }
        for topic in topics.values { rd_kafka_topic_destroy(topic) }
        topics.removeAll()
        lastTopic = nil
        // After this returns librdkafka calls no callback: `context` (kept by this object) may go.
        rd_kafka_destroy(handle.pointer)
    }
}

/// Kafka's rule for topic names: 1 to 249 characters of `a-z A-Z 0-9 . _ -`, and not `.` or `..`.
package enum KafkaTopicName {
    /// Throws a `rejected` error naming what is wrong with `name`.
    package static func validate(_ name: String) throws(KafkaError) {
        let bytes = Array(name.utf8)
        let allowed = bytes.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
        guard !bytes.isEmpty, bytes.count <= 249, allowed, name != ".", name != ".." else {
            throw KafkaError(
                kind: .rejected,
                message: "invalid topic name \"\(PeerText.sanitized(name))\": Kafka allows 1-249 of a-z A-Z 0-9 . _ -"
            )
        }
    }
}
