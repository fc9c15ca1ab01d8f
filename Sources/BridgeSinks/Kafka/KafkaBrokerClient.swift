package import BridgeJSON
package import BridgeKafka
package import BridgeSystem
package import BridgeEvents

/// A Kafka sink's client: one idempotent producer (`acks=all`, retried until delivered). Each event goes to its
/// topic with the item key as message key (so an item's changes share a partition, in order), the headers `id`,
/// `type`, `collection`, `event`, and the encoded event bytes as value.
final class KafkaBrokerClient: BrokerClient {
    private let producer: KafkaProducer
    private let topics: EventNameTemplate.Cache
    private let sinkName: String

    private init(producer: KafkaProducer, topic: String, sinkName: String) {
        self.producer = producer
        self.topics = EventNameTemplate.Cache(EventNameTemplate(text: topic))
        self.sinkName = sinkName
    }

    /// Makes the producer (connecting happens in the background: a cluster that is down is no error here, events
    /// wait for it); a setting librdkafka refuses is a configuration error, not retried.
    static func open(_ settings: KafkaSinkConfig, sinkName: String, logger: Logger) throws(SinkError)
        -> KafkaBrokerClient
    {
        do {
            let producer = try KafkaProducer.make(settings: settings.producerSettings, logger: logger)
            return KafkaBrokerClient(producer: producer, topic: settings.topic, sinkName: sinkName)
        } catch {
            throw SinkError(sink: sinkName, message: "\(error)", isRetriable: error.kind != .configuration)
        }
    }

    func submit(_ events: [EncodedEvent], completion: @escaping @Sendable ([BrokerOutcome]) -> Void)
        throws(SinkError)
    {
        let messages = events.map(message(for:))
        let producer = RunnerOwned(value: producer)
        do {
            try RunnerWait.result {
                try await producer.value.submit(messages) { outcomes in completion(outcomes.map(Self.outcome)) }
            }
        } catch {
            throw SinkError(sink: sinkName, message: "producing stopped: \(error)", isRetriable: true)
        }
    }

    /// The message of `event`.
    func message(for event: EncodedEvent) -> KafkaMessage {
        KafkaMessage(
            topic: topics.name(for: event),
            key: event.key,
            headers: [
                KafkaHeader(name: "id", value: event.id), KafkaHeader(name: "type", value: event.event.typeName),
                KafkaHeader(name: "collection", value: event.collection),
                KafkaHeader(name: "event", value: event.event.rawValue),
            ],
            value: event.body
        )
    }

    /// A page of an activity batch would otherwise wait `linger.ms` for messages that do not come.
    func expedite() { producer.expedite() }

    var problem: String? { producer.status.lastError.map(Self.describe) }

    var isBroken: Bool { producer.status.lastError?.requiresNewProducer == true }

    func close(drainTimeout: Duration) {
        let producer = RunnerOwned(value: producer)
        _ = try? RunnerWait.result { await producer.value.close(drainTimeout: drainTimeout) }
    }

    /// A delivery report is a delivery; a message the cluster can never take is passed over; anything else
    /// (refused authorization, a fatal producer error, a purge at close) is sent again.
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
