package import BridgeEvents
internal import BridgeJSON
package import BridgeNATS
internal import BridgeSystem

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
    static func open(_ settings: JetStreamSinkConfig, sinkName: String, logger: Logger) async throws(SinkError)
        -> JetStreamBrokerClient
    {
        let nats = settings.natsSettings
        do {
            let connection = try await NATSConnection.connect(settings: nats, logger: logger)
            let publisher: JetStreamPublisher
            do {
                publisher = try JetStreamPublisher.make(
                    connection: connection,
                    settings: JetStreamPublisherSettings(
                        maxOutstanding: settings.maxOutstanding,
                        ackTimeout: settings.ackTimeout
                    )
                )
            } catch {
                await connection.close()  // not left to its deinit, whose release may not run before an exit
                throw error
            }
            let client = JetStreamBrokerClient(
                connection: connection,
                publisher: publisher,
                subject: settings.subject,
                sinkName: sinkName
            )
            if let silent = await streamsNotAcknowledging(settings.subjectPattern, publisher: publisher) {
                await client.close(drainTimeout: .zero)
                throw SinkError(sink: sinkName, message: neverAcknowledges(silent), isRetriable: true)
            }
            return client
        } catch let error as SinkError {
            throw error
        } catch let error as NATSError {
            throw SinkError(sink: sinkName, message: Self.describe(error), isRetriable: error.kind != .configuration)
        } catch {
            throw SinkError(sink: sinkName, message: "\(error)", isRetriable: true)
        }
    }

    /// The streams taking `pattern` that never acknowledge a publish (`no_ack`), or nil when there are none or the
    /// server cannot tell now (publishing then meets whatever is wrong). Nothing may be published to such a stream:
    /// no event sent there could ever count as delivered, and every retry after the duplicate window would store it
    /// again; the sink waits, retrying, until the stream is changed.
    private static func streamsNotAcknowledging(_ pattern: String, publisher: JetStreamPublisher) async
        -> [String]?
    {
        let silent = try? await publisher.streamsNotAcknowledging(
            try await publisher.streamNames(matching: pattern, timeout: .seconds(5)),
            timeout: .seconds(5)
        )
        return silent?.isEmpty == false ? silent : nil
    }

    /// The error text for streams that never acknowledge a publish.
    package static func neverAcknowledges(_ streams: [String]) -> String {
        "stream \(streams.joined(separator: ", ")) never acknowledges a publish (no_ack): the bridge could not tell "
            + "that an event is stored, so it sends nothing there"
    }

    package func submit(_ events: [EncodedEvent], completion: @escaping @Sendable (BrokerOutcomes) -> Void)
        async throws(SinkError)
    {
        // The events are read in place, field by field: handing a whole event to a call copies it first, retaining
        // every field of it.
        let messages = events.withUnsafeBufferPointer { events in
            events.indices.map { index in
                JetStreamMessage(
                    subject: subjects.name(collection: events[index].collection, event: events[index].event),
                    messageID: events[index].identifier.description,
                    orderingKey: events[index].collection + "/" + events[index].key,
                    payload: events[index].body.bytes
                )
            }
        }
        do {
            // The sink's runner calls this on its own thread (`BrokerClient`): the publishes go out on it.
            try await publisher.submit(messages, publishingHere: true) { outcomes in
                completion(BrokerOutcomes(outcomes.map(Self.outcome)))
            }
        } catch {
            throw SinkError(sink: sinkName, message: "publishing stopped: \(error)", isRetriable: true)
        }
    }

    package var problem: String? {
        let status = publisher.connectionStatus
        switch status.state {
        case .connected:
            if let error = status.lastError, error.kind == .authentication { return Self.describe(error) }
            // Retried without end (a full stream heals when the operator raises its limits): say what the server
            // answers rather than only that nothing is confirmed.
            return publisher.lastRefusal.map { "the server answers publishes with an error: " + Self.describe($0) }
        case .reconnecting:
            return "connection to NATS lost, reconnecting" + (status.lastError.map { ": " + Self.describe($0) } ?? "")
        case .closed:
            return "NATS connection closed" + (status.lastError.map { ": " + Self.describe($0) } ?? "")
        }
    }

    package var isBroken: Bool { publisher.connectionStatus.state == .closed }

    package func close(drainTimeout: Duration) async {
        await publisher.close(drainTimeout: drainTimeout)
        await connection.close()
    }

    /// An acknowledgement is a delivery; a message the server can never take is refused (the sink makes it a dead
    /// letter); anything else is sent again.
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
        error.kind == .authentication && !error.isTLSFailure
            ? "\(error) (check the sink's credentials_file, token or user/password, and its permissions)"
            : "\(error)"
    }
}
