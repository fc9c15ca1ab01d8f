internal import BridgeSystem
internal import CRdKafka

// librdkafka's callbacks, as free functions whose signatures match the C typedefs exactly. Each recovers the
// `KafkaProducerContext` from the configuration's opaque pointer: it was passed unretained, which is safe because
// the producer keeps the context alive until `rd_kafka_destroy` (after which no callback runs) has returned.

/// `dr_msg_cb`: one call per produced message, on the thread that polls (the producer's poll thread, or a flush).
func kafkaDeliveryReport(
    _ handle: OpaquePointer?,
    _ message: UnsafePointer<rd_kafka_message_t>?,
    _ opaque: UnsafeMutableRawPointer?
) {
    guard let message, let opaque, let messageOpaque = message.pointee._private else { return }
    // Borrowed (see the note above), not retained and released per report.
    let context = Unmanaged<KafkaProducerContext>.fromOpaque(opaque)
    let code = message.pointee.err.rawValue
    let outcome: KafkaDeliveryOutcome
    if code == 0 {
        // The partition and offset are the broker's numbers: a negative partition cannot be real; an offset the
        // broker did not return is -1 (librdkafka's "invalid offset"), anything below is clamped to it.
        let partition = message.pointee.partition
        let offset = max(message.pointee.offset, -1)
        outcome =
            partition >= 0 ? .delivered(partition: partition, offset: offset) : .delivered(partition: -1, offset: -1)
    } else {
        // Not `rd_kafka_message_errstr`: for a message with a payload it returns the payload as the error text,
        // which for a producer is the event (not NUL-terminated, and data that must not reach a log).
        let redactor = context.takeUnretainedValue().redactor
        let detail = PeerText.string(rd_kafka_err2str(message.pointee.err), redacting: redactor)
        outcome = .failed(KafkaError.from(code: code, detail: detail))
    }
    context._withUnsafeGuaranteedRef { $0.reported(delivered: code == 0, error: outcome.error) }
    // librdkafka reports every message it accepted exactly once (delivered, failed, or purged at close): the batch
    // lives until its last message's report.
    KafkaDeliveryBatch.reported(outcome, opaque: messageOpaque)
}

/// `error_cb`: cluster-level errors (all brokers down, authentication failed, a fatal idempotence error).
func kafkaClusterError(
    _ handle: OpaquePointer?,
    _ code: Int32,
    _ reason: UnsafePointer<CChar>?,
    _ opaque: UnsafeMutableRawPointer?
) {
    guard let opaque else { return }
    let context = Unmanaged<KafkaProducerContext>.fromOpaque(opaque).takeUnretainedValue()
    let detail = PeerText.string(reason, redacting: context.redactor)
    guard code == RD_KAFKA_RESP_ERR__FATAL.rawValue, let handle else {
        context.recordClusterError(KafkaError.from(code: code, detail: detail))
        return
    }
    // A fatal error hides the one that caused it: librdkafka keeps the first fatal error's code and text.
    var text = [CChar](repeating: 0, count: 512)
    let underlying = rd_kafka_fatal_error(handle, &text, text.count).rawValue
    let cause = text.withUnsafeBufferPointer { PeerText.string($0.baseAddress, redacting: context.redactor) }
    var error = KafkaError.from(code: underlying == 0 ? code : underlying, detail: cause.isEmpty ? detail : cause)
    error.kind = .fatal
    context.recordClusterError(error)
}

/// `log_cb`: librdkafka's log lines (from its own threads), at info or below as every layer under Core logs.
func kafkaLog(
    _ handle: OpaquePointer?,
    _ level: Int32,
    _ facility: UnsafePointer<CChar>?,
    _ text: UnsafePointer<CChar>?
) {
    guard let handle, let opaque = rd_kafka_opaque(handle) else { return }
    let context = Unmanaged<KafkaProducerContext>.fromOpaque(opaque).takeUnretainedValue()
    // syslog levels: 0-4 (emergency … warning) → info, 5-6 (notice, info) → debug, 7 (debug) → trace.
    let mapped: LogLevel = level <= 4 ? .info : level <= 6 ? .debug : .trace
    guard context.logger.isEnabled(mapped) else { return }
    context.logger.log(
        mapped,
        "librdkafka",
        metadata: [
            KafkaLogKey.facility: PeerText.string(facility),
            KafkaLogKey.text: PeerText.string(text, redacting: context.redactor),
        ]
    )
}

/// Log metadata keys of this layer.
enum KafkaLogKey {
    static let facility = "kafka.facility"
    static let text = "kafka.log"
}
