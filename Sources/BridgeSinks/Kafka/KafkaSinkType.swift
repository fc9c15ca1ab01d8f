package import BridgeConfig
internal import BridgeKafka
internal import BridgeSystem
package import BridgeEvents

/// `type: kafka`: events produced to Kafka, delivered on their delivery report (`BrokerSink` over
/// `KafkaBrokerClient`).
package enum KafkaSinkType: SinkType {
    package static var configType: SinkConfigType { KafkaSinkConfig.configType }
    /// Its dead letters (events the broker refused for good) live in `<state_dir>/webhooks.db`.
    package static var keepsLocalState: Bool { true }

    /// No delivery report for this long while events are outstanding: the cluster is reported as failing.
    static let stallAfter: Duration = .seconds(10)

    package static func makeConnector(_ settings: KafkaSinkConfig, context: SinkContext) throws(RuntimeOutcome)
        -> any SinkConnector
    {
        let name = settings.summary
        // What librdkafka refuses only when a producer is made would otherwise stop the sink's first connect, and the
        // bridge with exit 1: it is a configuration error (78), like an NDJSON file that cannot be opened.
        if let refusal = settings.producerSettings.refusal() {
            throw .configurationProblem("\(name): librdkafka refuses the sink's properties: \(refusal)")
        }
        let logger = context.logger.child(label: "kafka", metadata: [LogKey.sink: context.sinkID])
        return try BrokerSink.make(
            name: name, context: context, maxOutstanding: settings.maxOutstanding, stallAfter: stallAfter,
            logger: logger
        ) { () async throws(SinkError) in
            try KafkaBrokerClient.open(settings, sinkName: name, encoder: context.encoder, logger: logger)
        }
    }

    /// `check`: the cluster answers and accepts the credentials, and the topic of every collection and event the sink
    /// takes exists; with `--send-test-event`, a test event is delivered (to the first collection's topic).
    package static func probe(_ settings: KafkaSinkConfig, context: SinkProbeContext) async -> [CheckResult] {
        let check = context.checkName(type: "kafka", target: settings.brokers.joined(separator: ","))
        let producer: KafkaProducer
        do {
            producer = try KafkaProducer.make(settings: settings.producerSettings, logger: context.logger)
        } catch {
            return [.fail(check, "\(error)", remedy: "fix the sink's properties")]
        }
        let result = await probe(settings, producer: producer, check: check, context: context)
        await producer.close(drainTimeout: .zero)
        return [result]
    }

    private static func probe(
        _ settings: KafkaSinkConfig, producer: KafkaProducer, check: String, context: SinkProbeContext
    ) async -> CheckResult {
        // Every topic the sink may produce to, each once: the first subscription's alone left the others to be
        // found missing at run time, where their events wait at the sink's cursor forever.
        let template = EventNameTemplate(text: settings.topic)
        var topics: [String] = []
        for collection in context.scope.collections {
            for event in context.scope.events {
                let topic = template.render(collection: collection, event: event.rawValue)
                if !topics.contains(topic) { topics.append(topic) }
            }
        }
        guard let topic = topics.first else { return .ok(check, "no subscribed collection reaches this sink") }
        var described: [KafkaTopicDescription] = []
        for name in topics {
            do {
                described.append(try await producer.describeTopic(name, timeout: .seconds(10)))
            } catch {
                let kafka = error as? KafkaError
                let remedy =
                    switch kafka?.kind {
                    case .authentication: "check the sasl.*/ssl.* properties and the principal's ACLs"
                    case _ where kafka?.code == .unknownTopicOrPartition: "create the topic \(name)"
                    default: "check brokers and that the cluster is reachable from this host"
                    }
                return .fail(check, "\(kafka.map(KafkaBrokerClient.describe) ?? "\(error)")", remedy: remedy)
            }
        }
        let found = described.map { "topic \($0.name): \($0.partitionCount) partitions, \($0.brokerCount) brokers" }
            .joined(separator: "; ")
        guard context.sendTestEvent else { return .ok(check, found) }
        let test = context.testEvent
        var headers: [KafkaHeader] = []
        var id = test.id
        id.withUTF8 { id in
            KafkaBrokerClient.addHeaders(
                to: &headers, id: UnsafeRawBufferPointer(id), type: "directus.bridge.test",
                collection: context.testCollection, event: "test", encoder: context.encoder)
        }
        let message = KafkaMessage(topic: topic, key: "", headers: headers, value: test.body)
        let outcome = (try? await producer.send([message], within: .seconds(15)))?.first
        switch outcome {
        case .delivered(let partition, let offset):
            return .ok(check, "test event \(test.id) delivered to \(topic) (partition \(partition), offset \(offset))")
        case .failed(let error):
            return .fail(
                check, "test event not delivered: \(KafkaBrokerClient.describe(error))",
                remedy: "see the topic's configuration and the principal's ACLs")
        case nil:
            return .fail(
                check, "test event to \(topic) not delivered within 15 s",
                remedy: "check that every partition of \(topic) has a leader")
        }
    }
}
