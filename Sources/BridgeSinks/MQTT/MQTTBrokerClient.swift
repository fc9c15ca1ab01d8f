package import BridgeEvents
import BridgeJSON
package import BridgeMQTT
import BridgeSystem

/// An MQTT sink's client: one libmosquitto client with a persistent session (it reconnects and resends by itself;
/// after a failed publish while disconnected the sink opens a new one). Each batch is published at once, each event
/// to its topic with the contract's user properties and, with a state topic, as its item's retained state; an event
/// is delivered when every message of it is acknowledged (PUBACK or PUBCOMP). An unacknowledged event is never
/// published again while this client holds it (`MQTTClient.publish(_:completion:)`): the sink's stall report says
/// when the broker takes too long.
package final class MQTTBrokerClient: BrokerClient {
    private let client: MQTTClient
    private let topics: EventNameTemplate.Cache
    private let stateTopic: MQTTStateTopic?
    /// Whether a publish failed (set on the network thread, read by the sink's runner).
    private let failed = SetOnceFlag()

    /// How long `check --send-test-event` waits for its acknowledgement; the sink reports a broker that
    /// acknowledges nothing for twice this as stalled.
    static let acknowledgementTimeout: Duration = .seconds(10)

    private init(client: MQTTClient, config: MQTTSinkConfig) {
        self.client = client
        self.topics = EventNameTemplate.Cache(EventNameTemplate(text: config.topic))
        self.stateTopic = config.stateTopic.map { MQTTStateTopic(text: $0) }
    }

    /// Connects as `clientID` and waits for the broker's CONNACK; an unreachable broker or refused credentials are
    /// retriable (the runner retries with backoff; an operator may fix the credentials), an unusable setting is not.
    static func open(_ config: MQTTSinkConfig, clientID: String, sinkName: String, logger: Logger)
        async throws(SinkError) -> MQTTBrokerClient
    {
        do {
            let client = try await MQTTClient.connect(settings: try config.clientSettings(clientID: clientID))
            if let note = windowNote(client.status, maxInFlight: config.maxInFlight) {
                logger.info("connected: \(note)")
            }
            return MQTTBrokerClient(client: client, config: config)
        } catch {
            throw SinkError(sink: sinkName, message: describe(error), isRetriable: error.kind != .configuration)
        }
    }

    /// What an operator should know when the broker takes fewer unacknowledged messages than `max_in_flight`
    /// (its CONNACK's Receive Maximum, 20 in mosquitto's default configuration): throughput is then that many
    /// messages per round trip, whatever the sink's setting. nil when the broker takes `maxInFlight` or more.
    static func windowNote(_ status: MQTTConnectionStatus, maxInFlight: Int) -> String? {
        guard let limit = status.receiveMaximum, limit < maxInFlight else { return nil }
        return "the broker takes \(limit) unacknowledged messages at a time (Receive Maximum), fewer than max_in_flight"
            + " \(maxInFlight): at most \(limit) per round trip (mosquitto: raise max_inflight_messages)"
    }

    /// The MQTT 5 user properties of an event's message (contract: `id`, `type`, `collection`, `key`, `event`, in
    /// this order): the sink's messages and the probe's test event (`check --send-test-event`) both come from here.
    static func userProperties(
        id: String, type: String, collection: String, key: String, event: String
    ) -> [MQTTMessage.UserProperty] {
        [.init("id", id), .init("type", type), .init("collection", collection), .init("key", key), .init("event", event)]
    }

    package func submit(_ events: [EncodedEvent], completion: @escaping @Sendable (BrokerOutcomes) -> Void)
        async throws(SinkError)
    {
        var messages: [MQTTMessage] = []
        messages.reserveCapacity(stateTopic == nil ? events.count : events.count * 2)
        for event in events {
            messages.append(
                MQTTMessage(
                    topic: topics.name(for: event),
                    payload: event.body.bytes,
                    userProperties: Self.userProperties(
                        id: event.id, type: event.event.typeName, collection: event.collection, key: event.key,
                        event: event.event.rawValue)
                )
            )
            if let stateTopic {
                // A delete clears the item's retained message: an empty retained payload.
                messages.append(
                    MQTTMessage(
                        topic: stateTopic.render(collection: event.collection, key: event.key),
                        payload: event.event == .delete ? [] : event.body.bytes,
                        retain: true
                    )
                )
            }
        }
        let perEvent = stateTopic == nil ? 1 : 2
        let failed = self.failed
        client.publish(messages) { outcomes in
            let results = events.indices.map { index in
                Self.outcome(outcomes[(index * perEvent)..<((index + 1) * perEvent)])
            }
            if results.contains(where: { if case .retry = $0 { true } else { false } }) { failed.set() }
            completion(BrokerOutcomes(results))
        }
    }

    /// An event's outcome from its messages': delivered when all were acknowledged; refused for good when the
    /// broker refused one for good (a dead letter); else sent again.
    private static func outcome(_ outcomes: ArraySlice<MQTTOutcome>) -> BrokerOutcome {
        let errors = outcomes.compactMap(\.error)
        guard let first = errors.first else { return .delivered(duplicate: false) }
        if let refusal = errors.first(where: { $0.kind == .rejected }) { return .rejected(describe(refusal)) }
        return .retry(describe(first))
    }

    /// Why the client cannot deliver right now: the connection is down (lost, or the broker refused it).
    package var problem: String? {
        let status = client.status
        guard !status.connected else { return nil }
        return (status.credentialsRefused ?? status.lastError).map(Self.describe) ?? "not connected to the broker"
    }

    /// Broken while the connection is down after a publish failed or the broker refused the credentials: the sink
    /// opens a new client, which resumes the same session and whose connect says why the broker refuses it, where
    /// the old client's network thread only retries with backoff. What the old one held is sent again on it.
    package var isBroken: Bool {
        let status = client.status
        return !status.connected && (failed.isSet || status.credentialsRefused != nil)
    }

    package func close(drainTimeout: Duration) async {
        await client.close()
    }

    /// The error with what to do about credentials.
    package static func describe(_ error: MQTTError) -> String {
        error.kind == .authentication
            ? "\(error) (check the user and password in the sink's url, the broker's ACL, and ca_file)"
            : "\(error)"
    }
}
