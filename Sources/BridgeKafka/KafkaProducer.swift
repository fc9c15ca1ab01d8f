package import BridgeSystem
internal import CRdKafka

/// An idempotent Kafka producer (`acks=all`) over one librdkafka handle.
///
/// `submit` hands a batch of messages to librdkafka and calls its completion once every message has an outcome
/// (delivered at partition/offset, or failed with a typed error), in submission order. At most
/// `settings.maxOutstanding` messages are outstanding: `submit` waits for delivery reports beyond that. Delivery
/// reports are served by a thread of the producer's own (`KafkaPollThread`), except while a thread that produces
/// with `submitBlocking` has taken them over (`takeReportsOver`, `KafkaReportServing`).
///
/// Confined to one task (not Sendable): `submit`, `describeTopic`, `flush` and `close` are called by the task that
/// owns it, one at a time. Completions run on the thread that serves the report (the poll thread, or the thread that
/// took the reports over, in `submitBlocking` or `serveReports`) and must be short (resume a task, record a result).
package final class KafkaProducer {
    private let handle: KafkaHandle
    private let context: KafkaProducerContext
    private let resources: KafkaProducerResources
    private let serving: KafkaReportServing
    private var closed = false

    private init(handle: KafkaHandle, context: KafkaProducerContext, resources: KafkaProducerResources) {
        self.handle = handle
        self.context = context
        self.resources = resources
        self.serving = resources.serving
    }

    /// Dropped without `close()`: the release (the purge, the poll thread's join, the purge's delivery reports and
    /// their completions, `rd_kafka_destroy`'s join of librdkafka's threads) goes to `BlockingExecutor.shared`, as
    /// `close()`'s does, not to the dropping thread, often a cooperative one. The job holds the resources.
    deinit {
        let resources = resources
        BlockingExecutor.shared.submit { resources.release() }
    }

    /// Makes a producer from `settings`; throws a configuration error naming the first refused property (secret
    /// values never appear in it). Connecting happens in the background: a cluster that is down is not an error
    /// here, messages wait for it.
    package static func make(settings: KafkaProducerSettings, logger: Logger) throws(KafkaError) -> KafkaProducer {
        let redactor = Redactor(secrets: settings.secretValues)
        let configuration = try KafkaConfiguration.make(settings.librdkafkaProperties())
        let context = KafkaProducerContext(limit: settings.maxOutstanding, logger: logger, redactor: redactor)
        configuration.withPointer { configuration in
            // Unretained: the producer owns `context` (through `resources`) and releases it only after
            // rd_kafka_destroy returned, after which librdkafka calls none of these callbacks.
            rd_kafka_conf_set_opaque(configuration, Unmanaged.passUnretained(context).toOpaque())
            rd_kafka_conf_set_dr_msg_cb(configuration, kafkaDeliveryReport)
            rd_kafka_conf_set_error_cb(configuration, kafkaClusterError)
            rd_kafka_conf_set_log_cb(configuration, kafkaLog)
        }
        var errorText = [CChar](repeating: 0, count: 512)
        let made = configuration.consume { configuration in
            rd_kafka_new(RD_KAFKA_PRODUCER, configuration, &errorText, errorText.count)
        }
        guard let pointer = made else {
            let reason = errorText.withUnsafeBufferPointer { PeerText.string($0.baseAddress, redacting: redactor) }
            throw KafkaError(kind: .configuration, message: "librdkafka refused the settings: \(reason)")
        }
        let handle = KafkaHandle(pointer: pointer)
        let pollThread: KafkaPollThread
        do {
            pollThread = try KafkaPollThread(handle: handle)
        } catch {
            rd_kafka_destroy(pointer)
            throw error
        }
        let resources = KafkaProducerResources(handle: handle, pollThread: pollThread, context: context)
        return KafkaProducer(handle: handle, context: context, resources: resources)
    }

    // MARK: - Producing

    /// Produces `messages` in order; `completion` gets one outcome per message, in the same order, once the last
    /// one is known (on the poll thread; keep it short).
    ///
    /// Returns once every message is handed to librdkafka, waiting while `maxOutstanding` messages are
    /// outstanding. If the task is cancelled while waiting, it throws `CancellationError`; the messages not
    /// handed over yet are reported failed (retriable, "not sent") and the completion still runs exactly once.
    package func submit(
        _ messages: [KafkaMessage],
        completion: @escaping @Sendable (KafkaDeliveryOutcomes) -> Void
    ) async throws {
        precondition(!closed, "KafkaProducer.submit after close")
        var handing = Handing(count: messages.count, completion: completion)
        defer { handing.finishUnsent() }
        while !handing.isDone {
            try Task.checkCancellation()
            if !handOver(&handing, message: { index, message, _ in message = messages[index] }, servingReports: false) {
                await context.waitForCapacity()
            }
        }
    }

    /// `submit` for a thread that may block (a sink's runner, never the cooperative pool): the same hand-over,
    /// without a hop to a task and back. The calling thread takes the delivery reports over (`takeReportsOver`):
    /// waiting for room, it serves them itself, until it hands them back (`handReportsBack`).
    package func submitBlocking(
        _ messages: [KafkaMessage],
        completion: @escaping @Sendable (KafkaDeliveryOutcomes) -> Void
    ) {
        submitBlocking(
            count: messages.count,
            message: { index, message, _ in message = messages[index] },
            completion: completion
        )
    }

    /// `submitBlocking` of `count` messages that `message(index, &message, &headers)` writes one at a time into the
    /// same message, each just before it is handed over: a caller producing from its own events builds no array of
    /// messages, and adds the headers straight into librdkafka's list (`headers`, empty for each message; a header of
    /// `message.headers` goes after them), without a `String` per header (BENCHMARKS.md, "Kafka: the sink's per-event
    /// work" and "Kafka: the header list from the event's bytes").
    package func submitBlocking(
        count: Int,
        message: (Int, inout KafkaMessage, inout KafkaHeaderList) -> Void,
        completion: @escaping @Sendable (KafkaDeliveryOutcomes) -> Void
    ) {
        precondition(!closed, "KafkaProducer.submit after close")
        takeReportsOver()
        var handing = Handing(count: count, completion: completion)
        while !handing.isDone {
            if !handOver(&handing, message: message, servingReports: true) { serveReportsUntilRoom() }
        }
    }

    /// Serves reports on the calling thread until a quarter of the bound is free (so it produces in chunks rather
    /// than one message per report).
    private func serveReportsUntilRoom() {
        while !context.hasRoomForChunk {
            // Bounded, so that a bound lowered meanwhile (`capacityReached`) is seen again: reports end it sooner.
            serving.serveOnRunner(waitingAtMost: .milliseconds(100))
        }
    }

    /// Hands over as many of `handing`'s messages (written by `message(index, &message, &headers)`) as the bound
    /// allows; false
    /// when there was no room at all (the caller waits for capacity). `servingReports`: the calling thread serves the
    /// reports that arrived after each message, as librdkafka's own producer loop does, so that their frees come
    /// between its mallocs.
    private func handOver(
        _ handing: inout Handing,
        message: (Int, inout KafkaMessage, inout KafkaHeaderList) -> Void,
        servingReports: Bool
    ) -> Bool {
        var granted = context.reserve(upTo: handing.count - handing.next)
        if granted == 0 { return false }
        while granted > 0 {
            granted -= 1
            let index = handing.next
            var headers = KafkaHeaderList()
            message(index, &handing.message, &headers)
            switch produce(handing.message, headers: headers, batch: handing.batch, index: index) {
            case .handedOver:
                handing.next += 1
                if servingReports { serving.serveArrivedOnRunner() }
            case .refused(let error):
                context.unreserve(1)
                context.countFailedBeforeProduce()
                handing.batch.record(.failed(error), at: index)
                handing.next += 1
            case .queueFull:
                // librdkafka holds fewer than our bound: give the rest back, shrink the bound, wait.
                context.unreserve(granted + 1)
                context.capacityReached()
                granted = 0
            }
        }
        return true
    }

    private enum ProduceResult {
        case handedOver
        case refused(KafkaError)
        case queueFull
    }

    /// Produces `message` with `headers` (then `message.headers`): on success librdkafka owns the header list, on
    /// failure it is destroyed here.
    private func produce(
        _ message: KafkaMessage,
        headers list: consuming KafkaHeaderList,
        batch: KafkaDeliveryBatch,
        index: Int
    ) -> ProduceResult {
        for header in message.headers { list.add(header) }
        let headers = list.pointer
        let topic: OpaquePointer
        switch resources.topicHandle(message.topic) {
        case .success(let handle): topic = handle
        case .failure(let error):
            if let headers { rd_kafka_headers_destroy(headers) }
            return .refused(error)
        }
        // Where the delivery report of this message records its outcome (kafkaDeliveryReport).
        let opaque = batch.opaque(at: index)
        var key = message.key
        let code = key.withUTF8 { key in
            message.value.withUnsafeBytes { value in
                crdkafka_produce(
                    handle.pointer,
                    topic,
                    key.baseAddress,
                    key.count,
                    value.baseAddress,
                    value.count,
                    headers,
                    opaque
                )
            }
        }.rawValue
        if code == 0 { return .handedOver }
        // librdkafka refused the message: it will NOT report it (the caller records its outcome), and the headers
        // stay ours to destroy (producev takes them only on success).
        if let headers { rd_kafka_headers_destroy(headers) }
        if code == RD_KAFKA_RESP_ERR__QUEUE_FULL.rawValue { return .queueFull }
        return .refused(KafkaError.from(code: code, context: "topic \(message.topic)"))
    }

    // MARK: - Reports served by the producing thread

    /// The calling thread (a sink's runner, never the cooperative pool) serves the delivery reports from now on, in
    /// `submitBlocking`'s and `serveReports`'s waits, until `handReportsBack()`: librdkafka then frees each
    /// message on the thread that allocated it (`KafkaReportServing`). The poll thread serves nothing meanwhile, so
    /// the caller must hand them back before it waits for anything else. Cheap when taken already.
    package func takeReportsOver() {
        precondition(!closed, "KafkaProducer.takeReportsOver after close")
        serving.takeTurnForRunner()
    }

    /// Serves the delivery reports that arrived on the calling thread (completions run here), waiting at most
    /// `timeout` (nil: until one arrives) when none has; takes the reports over first if need be.
    package func serveReports(waitingAtMost timeout: Duration?) {
        precondition(!closed, "KafkaProducer.serveReports after close")
        serving.serveOnRunner(waitingAtMost: timeout)
    }

    /// The poll thread serves the delivery reports again (the caller is about to wait for something else).
    package func handReportsBack() {
        serving.runnerLeaves()
    }

    // MARK: - Health, probe, drain

    /// The producer's health: the last cluster error (cleared by the next delivery), outstanding and counters.
    package var status: KafkaProducerStatus { context.status }

    /// Asks the cluster for `topic`'s metadata (reachable, authenticated, topic exists), waiting at most `timeout`.
    package func describeTopic(_ topic: String, timeout: Duration) async throws -> KafkaTopicDescription {
        try KafkaTopicName.validate(topic)
        let handle = self.handle
        return try await BlockingExecutor.shared.perform {
            try KafkaMetadataProbe.describe(topic: topic, handle: handle, timeout: timeout)
        }
    }

    /// Sends the messages librdkafka holds back to fill a batch (`linger.ms`) at once, without waiting for them: for
    /// a caller about to wait for their delivery reports, when nothing more will come to fill the batch. Returns at
    /// once; whichever thread serves the reports next flushes.
    package func expedite() {
        precondition(!closed, "KafkaProducer.expedite after close")
        serving.expedite(.untilDrained)
    }

    /// Sends the messages librdkafka holds back for `linger.ms` at once, then lets it batch again: for a caller
    /// waiting for room that will produce more once it has some (a flush that lasted would send each later message
    /// on its own, in small batches). Returns at once.
    package func sendLingering() {
        precondition(!closed, "KafkaProducer.sendLingering after close")
        serving.expedite(.briefly)
    }

    /// Waits until every outstanding message has its outcome, at most `timeout`; true if none is left.
    package func flush(timeout: Duration) async -> Bool {
        let handle = self.handle
        let milliseconds = Int32(clamping: timeout.roundedUpMilliseconds)
        let drained = try? await BlockingExecutor.shared.perform {
            // rd_kafka_flush polls too: the reports it serves run the same (thread-safe) callbacks.
            rd_kafka_flush(handle.pointer, milliseconds).rawValue == 0
        }
        return drained ?? false
    }

    /// Drains for at most `drainTimeout`, then purges what is left (reported failed, retriable) and releases the
    /// librdkafka handle on the blocking executor. The producer cannot be used afterwards.
    package func close(drainTimeout: Duration) async {
        guard !closed else { return }
        closed = true
        _ = await flush(timeout: drainTimeout)
        let resources = self.resources
        _ = try? await BlockingExecutor.shared.perform { resources.release() }
    }
}
