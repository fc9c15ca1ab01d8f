internal import BridgeConfig
internal import BridgeEvents
internal import BridgeJSON
internal import BridgeKafka
internal import BridgeSystem

/// A Kafka sink's client: one idempotent producer (`acks=all`, retried until delivered). Each event goes to its
/// topic with the item key as message key (so an item's changes share a partition, in order), the headers `id`,
/// `type`, `collection`, `event` (and `content-type` for `format: cloudevents`), and the encoded event bytes as
/// value.
final class KafkaBrokerClient: BrokerClient {
    private let producer: KafkaProducer
    private let topics: EventNameTemplate.Cache
    private let sinkName: String
    private let encoder: EventEncoder

    private init(producer: KafkaProducer, topic: String, sinkName: String, encoder: EventEncoder) {
        self.producer = producer
        self.topics = EventNameTemplate.Cache(EventNameTemplate(text: topic))
        self.sinkName = sinkName
        self.encoder = encoder
    }

    /// Makes the producer (connecting happens in the background: a cluster that is down is no error here, events
    /// wait for it); a setting librdkafka refuses is a configuration error, not retried. `encoder` is the sink's
    /// format (the events come encoded; it decides the `content-type` header).
    static func open(_ settings: KafkaSinkConfig, sinkName: String, encoder: EventEncoder, logger: Logger)
        throws(SinkError) -> KafkaBrokerClient
    {
        do {
            let producer = try KafkaProducer.make(settings: settings.producerSettings, logger: logger)
            return KafkaBrokerClient(producer: producer, topic: settings.topic, sinkName: sinkName, encoder: encoder)
        } catch {
            throw SinkError(sink: sinkName, message: "\(error)", isRetriable: error.kind != .configuration)
        }
    }

    func submit(_ events: [EncodedEvent], completion: @escaping @Sendable (BrokerOutcomes) -> Void)
        async throws(SinkError)
    {
        // On the runner's own thread, which may block while the producer is at its bound: no hop to another
        // thread and back for every batch. Each message is written as it is handed over, over the one before (no
        // array of them, no header array per message). The runner serves the delivery reports from here until it
        // hands them back (`handOutcomesBack`). The outcomes are read from the producer's batch, not copied.
        events.withUnsafeBufferPointer { events in
            // Each event read where it lies, by its address: `events[index]` as an argument was a copy of the whole
            // event per message (a retain and a release of each of its fields). The closure runs only for an index
            // below the count, so the address exists.
            producer.submitBlocking(
                count: events.count,
                message: { write(events.baseAddress.unsafelyUnwrapped + $0, into: &$1, headers: &$2) }
            ) { outcomes in
                completion(
                    outcomes.allDelivered
                        ? .delivered(outcomes.count)
                        : BrokerOutcomes(count: outcomes.count) { Self.outcome(outcomes[$0]) }
                )
            }
        }
    }

    /// Writes the message of the event at `event` over `message` (only the fields the message takes are read from
    /// the event), and its headers into `headers`, added as the event's bytes (no `String` per header; a live id
    /// rendered on the stack).
    private func write(
        _ event: UnsafePointer<EncodedEvent>,
        into message: inout KafkaMessage,
        headers: inout KafkaHeaderList
    ) {
        message.topic = topics.name(collection: event.pointee.collection, event: event.pointee.event)
        message.key = event.pointee.key
        message.value = event.pointee.body.slice  // no copy: the producer copies it
        event.pointee.identifier.withUTF8 { id in
            Self.addHeaders(
                to: &headers, id: id, type: event.pointee.event.typeName, collection: event.pointee.collection,
                event: event.pointee.event.rawValue, encoder: encoder)
        }
    }

    /// Adds the headers of a message to `headers` (contract: `id`, `type`, `collection`, `event`, in this order). A
    /// CloudEvent adds `content-type: application/cloudevents+json`: the CloudEvents Kafka binding's structured mode
    /// requires it, and consumers' SDKs tell structured from binary mode by it. The one place their names and order
    /// are written: the sink's messages and the probe's test event (`check --send-test-event`) both come here.
    static func addHeaders<Headers: KafkaHeaderAdding & ~Copyable>(
        to headers: inout Headers,
        id: UnsafeRawBufferPointer,
        type: String,
        collection: String,
        event: String,
        encoder: EventEncoder
    ) {
        headers.add("id", bytes: id)
        headers.add("type", type)
        headers.add("collection", collection)
        headers.add("event", event)
        if encoder.format == .cloudevents { headers.add("content-type", encoder.contentType) }
    }

    /// A page of an activity batch would otherwise wait `linger.ms` for messages that do not come. The runner is
    /// about to wait serving the reports: it flushes (not the poll thread, which would keep the reports a while).
    func expedite() {
        producer.takeReportsOver()
        producer.expedite()
    }

    /// At the bound, what lingers goes now; the stream that follows is batched again (`linger.ms`). As `expedite`,
    /// on the runner's thread.
    func sendLingering() {
        producer.takeReportsOver()
        producer.sendLingering()
    }

    /// The runner serves the delivery reports while it waits, so that librdkafka frees each message on the thread
    /// that allocated it (BENCHMARKS.md, "Kafka: the runner serves its delivery reports").
    func serveOutcomes(waitingAtMost timeout: Duration?) -> Bool {
        producer.serveReports(waitingAtMost: timeout)
        return true
    }

    func handOutcomesBack() { producer.handReportsBack() }

    var problem: String? { producer.status.lastError.map(Self.describe) }

    var isBroken: Bool { producer.status.lastError?.requiresNewProducer == true }

    func close(drainTimeout: Duration) async {
        await producer.close(drainTimeout: drainTimeout)
    }

    /// A delivery report is a delivery; a message the cluster can never take is refused (the sink makes it a dead
    /// letter); anything else (refused authorization, a fatal producer error, a purge at close) is sent again.
    private static func outcome(_ outcome: KafkaDeliveryOutcome) -> BrokerOutcome {
        switch outcome {
        case .delivered: .delivered(duplicate: false)
        case .failed(let error) where error.kind == .rejected || error.kind == .configuration:
            .rejected(describe(error))
        case .failed(let error): .retry(describe(error))
        }
    }

    /// The error with what to do about credentials.
    static func describe(_ error: KafkaError) -> String {
        error.kind == .authentication
            ? "\(error) (check the sink's sasl.*/ssl.* properties and the principal's ACLs)" : "\(error)"
    }
}
