import BridgeAMQP
package import BridgeConfig
package import BridgeEvents
internal import BridgeSystem

/// `type: amqp`: events published to RabbitMQ (AMQP 0-9-1), delivered on the broker's publisher confirm
/// (`BrokerSink` over `AMQPBrokerClient`).
package enum AMQPSinkType: SinkType {
    package static var configType: SinkConfigType { AMQPSinkConfig.configType }
    /// Its dead letters (messages no queue took) live in `<state_dir>/webhooks.db`.
    package static var keepsLocalState: Bool { true }

    package static func makeConnector(_ settings: AMQPSinkConfig, context: SinkContext) throws(RuntimeOutcome)
        -> any SinkConnector
    {
        let name = settings.summary
        let logger = context.logger.child(label: "amqp", metadata: [LogKey.sink: context.sinkID])
        // No confirm for two confirm timeouts: the batch in flight failed and was sent again at least once.
        return try BrokerSink.make(
            name: name,
            context: context,
            maxOutstanding: settings.maxInFlight,
            stallAfter: AMQPBrokerClient.confirmTimeout * 2,
            logger: logger
        ) { () async throws(SinkError) in
            try await AMQPBrokerClient.open(settings, sinkName: name)
        }
    }

    /// `check`: the broker answers and accepts the credentials and the vhost, and the exchange exists; with
    /// `--send-test-event`, a test event is published and confirmed, and a queue took it.
    package static func probe(_ settings: AMQPSinkConfig, context: SinkProbeContext) async -> [CheckResult] {
        let check = context.checkName(type: "amqp", target: ShownURL.of(settings.url))
        let client: AMQPClient
        do {
            client = AMQPClient(settings: try settings.clientSettings())
            try await client.connect()
        } catch {
            return [
                .fail(
                    check,
                    "cannot connect: \(AMQPBrokerClient.describe(error, exchange: settings.exchange))",
                    remedy: error.kind == .authentication
                        ? "check the user, password and vhost in url against the broker's users and permissions, "
                            + "and ca_file"
                        : "check url and that rabbitmq-server runs and is reachable from this host"
                )
            ]
        }
        let result = await probe(settings, client: client, check: check, context: context)
        await client.close()
        return [result]
    }

    private static func probe(
        _ settings: AMQPSinkConfig,
        client: AMQPClient,
        check: String,
        context: SinkProbeContext
    ) async -> CheckResult {
        let exchange = settings.exchange
        let shownExchange = exchange.isEmpty ? "the default exchange" : "exchange \(exchange)"
        if !exchange.isEmpty {
            do {
                try await client.checkExchange(exchange)
            } catch {
                return .fail(
                    check,
                    "\(shownExchange): \(error.message)",
                    remedy: error.kind == .authentication
                        ? "grant the user access to \(exchange) in the vhost"
                        : "declare it (e.g. rabbitmqadmin declare exchange name=\(exchange) type=topic durable=true)"
                            + " or change the sink's exchange"
                )
            }
        }
        guard context.sendTestEvent else { return .ok(check, "connected; \(shownExchange) exists") }
        let test = context.testEvent
        let routingKey = EventNameTemplate(text: settings.routingKey)
            .render(collection: context.testCollection, event: "test")
        let message = AMQPMessage(
            exchange: exchange,
            routingKey: routingKey,
            messageID: test.id,
            headers: AMQPBrokerClient.headers(
                type: SinkTestEvent.type, collection: context.testCollection, key: "", event: "test"),
            body: test.body
        )
        let outcomes: [AMQPOutcome]
        do {
            outcomes = try await client.publish([message], timeout: .seconds(10))
        } catch {
            return .fail(
                check,
                "test event not published: \(AMQPBrokerClient.describe(error, exchange: exchange))",
                remedy: "check the user's write permission in the vhost"
            )
        }
        switch outcomes.first {
        case nil:
            return .fail(check, "test event not published", remedy: "check the broker's log")
        case .confirmed:
            return .ok(check, "test event \(test.id) confirmed by \(shownExchange) with routing key \(routingKey)")
        case .returned(let reason):
            return .fail(
                check,
                "test event \(test.id) \(reason): routing key \(routingKey)",
                remedy: "bind a queue to \(shownExchange) for \(routingKey), or events will be dead letters"
            )
        case .failed(let error):
            return .fail(
                check,
                "test event not confirmed: \(AMQPBrokerClient.describe(error, exchange: exchange))",
                // A nack or a block is the broker's state, not a permission: a full queue or an alarm.
                remedy: error.kind == .authentication
                    ? "check the user's write permission in the vhost"
                    : "the broker takes no publishes for now (a queue with reject-publish full, a memory or disk "
                        + "alarm): see its log; events wait meanwhile"
            )
        }
    }
}
