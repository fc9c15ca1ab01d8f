package import BridgeNATS
package import BridgeSystem
package import BridgeEvents

/// A JetStream sink's client: one NATS connection (reconnecting to any server of the cluster) and one
/// asynchronous publisher on it. Each event goes to its subject with `Nats-Msg-Id` = the event id, ordered per item
/// (`<collection>/<key>`), its payload the encoded event bytes.
package final class JetStreamBrokerClient: BrokerClient {
    private let connection: NATSConnection
    private let publisher: JetStreamPublisher
    private let subjects: EventNameTemplate.Cache
    private let sinkName: String

    private init(connection: NATSConnection, publisher: JetStreamPublisher, subject: String, sinkName: String) {
        self.connection = connection
        self.publisher = publisher
        self.subjects = EventNameTemplate.Cache(EventNameTemplate(text: subject))
        self.sinkName = sinkName
    }

    /// Connects to `settings.servers`; a server that cannot be reached or refuses the credentials is a retriable
    /// error (the sink runner retries with backoff; an operator may fix the credentials), an unusable setting is not.
    static func open(_ settings: JetStreamSinkConfig, sinkName: String, logger: Logger) throws(SinkError)
        -> JetStreamBrokerClient
    {
        let nats = settings.natsSettings
        do {
            let connection = try RunnerWait.result {
                RunnerOwned(value: try await NATSConnection.connect(settings: nats, logger: logger))
            }.value
            let publisher = try JetStreamPublisher.make(
                connection: connection,
                settings: JetStreamPublisherSettings(
                    maxOutstanding: settings.maxOutstanding, ackTimeout: settings.ackTimeout)
            )
            return JetStreamBrokerClient(
                connection: connection, publisher: publisher, subject: settings.subject, sinkName: sinkName)
        } catch let error as NATSError {
            throw SinkError(sink: sinkName, message: Self.describe(error), isRetriable: error.kind != .configuration)
        } catch {
            throw SinkError(sink: sinkName, message: "\(error)", isRetriable: true)
        }
    }

    package func submit(_ events: [EncodedEvent], completion: @escaping @Sendable ([BrokerOutcome]) -> Void)
        throws(SinkError)
    {
        let messages = events.map { event in
            JetStreamMessage(
                subject: subjects.name(for: event),
                messageID: event.id,
                orderingKey: event.collection + "/" + event.key,
                payload: event.body
            )
        }
        let publisher = RunnerOwned(value: publisher)
        do {
            try RunnerWait.result {
                try await publisher.value.submit(messages) { outcomes in completion(outcomes.map(Self.outcome)) }
            }
        } catch {
            throw SinkError(sink: sinkName, message: "publishing stopped: \(error)", isRetriable: true)
        }
    }

    package var problem: String? {
        let status = publisher.connectionStatus
        switch status.state {
        case .connected:
            guard let error = status.lastError, error.kind == .authentication else { return nil }
            return Self.describe(error)
        case .reconnecting:
            return "connection to NATS lost, reconnecting" + (status.lastError.map { ": " + Self.describe($0) } ?? "")
        case .closed:
            return "NATS connection closed" + (status.lastError.map { ": " + Self.describe($0) } ?? "")
        }
    }

    package var isBroken: Bool { publisher.connectionStatus.state == .closed }

    package func close(drainTimeout: Duration) {
        let parts = RunnerOwned(value: (publisher, connection))
        _ = try? RunnerWait.result {
            await parts.value.0.close(drainTimeout: drainTimeout)
            await parts.value.1.close()
        }
    }

    /// An acknowledgement is a delivery; a message the server can never take is passed over; anything else is
    /// sent again.
    private static func outcome(_ outcome: JetStreamOutcome) -> BrokerOutcome {
        switch outcome {
        case .acknowledged(let ack): .delivered(duplicate: ack.duplicate)
        case .failed(let error) where error.kind == .rejected || error.kind == .configuration:
            .rejected(describe(error))
        case .failed(let error): .retry(describe(error))
        }
    }

    /// The error with what to do about credentials.
    package static func describe(_ error: NATSError) -> String {
        error.kind == .authentication
            ? "\(error) (check the sink's credentials_file, token or user/password, and its permissions)"
            : "\(error)"
    }
}
