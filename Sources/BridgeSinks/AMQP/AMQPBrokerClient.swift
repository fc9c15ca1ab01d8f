package import BridgeAMQP
package import BridgeEvents
import BridgeJSON
import BridgeSystem

/// An AMQP sink's client: one connection with one channel in confirm mode (reopened by the next batch after it
/// broke); each batch published with the contract's properties and headers and answered by the broker's confirms.
package final class AMQPBrokerClient: BrokerClient {
    private let client: AMQPClient
    private let exchange: String
    private let routingKeys: EventNameTemplate.Cache
    private var lastError: AMQPError?

    /// How long a batch may go without any confirm before what is unanswered fails (and is sent again).
    static let confirmTimeout: Duration = .seconds(10)

    private init(client: AMQPClient, config: AMQPSinkConfig) {
        self.client = client
        self.exchange = config.exchange
        self.routingKeys = EventNameTemplate.Cache(EventNameTemplate(text: config.routingKey))
    }

    /// Connects (login, vhost, confirm mode) and checks that the exchange exists. An unreachable broker, refused
    /// credentials and a missing exchange are retriable (the runner retries with backoff; an operator may fix the
    /// credentials or declare the exchange); an unusable setting (a CA file that cannot be read) is not.
    static func open(_ config: AMQPSinkConfig, sinkName: String) async throws(SinkError) -> AMQPBrokerClient {
        let client: AMQPClient
        do {
            client = AMQPClient(settings: try config.clientSettings())
            try await client.connect()
        } catch {
            throw SinkError(
                sink: sinkName,
                message: describe(error, exchange: config.exchange),
                isRetriable: error.kind != .configuration
            )
        }
        if !config.exchange.isEmpty {
            do {
                try await client.checkExchange(config.exchange)
            } catch {
                await client.close()
                // Missing (404) or hidden from the user (403): an operator may declare it or grant access meanwhile.
                throw SinkError(sink: sinkName, message: describe(error, exchange: config.exchange), isRetriable: true)
            }
        }
        return AMQPBrokerClient(client: client, config: config)
    }

    package func submit(_ events: [EncodedEvent], completion: @escaping @Sendable (BrokerOutcomes) -> Void)
        async throws(SinkError)
    {
        let messages = events.map(message)
        do {
            let outcomes = try await client.publish(messages, timeout: Self.confirmTimeout)
            lastError = outcomes.lazy.compactMap(\.failure).first
            completion(BrokerOutcomes(zip(messages, outcomes).map { outcome($1, of: $0) }))
        } catch {
            lastError = error
            completion(BrokerOutcomes(events.map { _ in .retry(describe(error, exchange: exchange)) }))
        }
    }

    /// The message of `event`: its body, `message_id` = its id, and the headers the contract names.
    func message(_ event: EncodedEvent) -> AMQPMessage {
        AMQPMessage(
            exchange: exchange,
            routingKey: routingKeys.name(for: event),
            messageID: event.id,
            headers: Self.headers(
                type: event.event.typeName, collection: event.collection, key: event.key, event: event.event.rawValue),
            body: event.body.bytes
        )
    }

    /// The headers of an event's message (contract: `type`, `collection`, `key`, `event`, in this order; the id is its
    /// `message_id`): the sink's messages and the probe's test event (`check --send-test-event`) both come from here.
    static func headers(type: String, collection: String, key: String, event: String) -> [AMQPMessage.Header] {
        [.init("type", type), .init("collection", collection), .init("key", key), .init("event", event)]
    }

    package var problem: String? { lastError.map { describe($0, exchange: exchange) } }

    /// Broken after a failure that closed the connection: the sink opens a new client (and reports while it cannot).
    package var isBroken: Bool { lastError != nil && !client.isConnected }

    package func close(drainTimeout: Duration) async {
        await client.close()
    }

    private func outcome(_ outcome: AMQPOutcome, of message: AMQPMessage) -> BrokerOutcome {
        switch outcome {
        case .confirmed: .delivered(duplicate: false)
        // No queue took it: sending it again changes nothing until one is bound, so it waits in the dead letters.
        case .returned(let reason):
            .rejected("\(reason): exchange \"\(exchange)\", routing key \"\(message.routingKey)\"")
        case .failed(let error): .retry(describe(error, exchange: exchange))
        }
    }

    /// The error with what to do about it.
    package static func describe(_ error: AMQPError, exchange: String) -> String {
        switch error.kind {
        case .authentication: "\(error) (check the user, password and vhost in the sink's url, and ca_file)"
        // A missing exchange (404), or a CA file librabbitmq cannot load.
        case .configuration: "\(error) (check that the exchange \"\(exchange)\" exists, and ca_file)"
        case .retriable: "\(error)"
        }
    }

    private func describe(_ error: AMQPError, exchange: String) -> String { Self.describe(error, exchange: exchange) }
}

extension AMQPOutcome {
    /// The error of a failed publish.
    fileprivate var failure: AMQPError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}
