package import BridgeEvents
import BridgeJSON
package import BridgeRedis
import BridgeSystem

/// A Redis sink's client: one connection (reopened by the next batch after it broke); each batch one pipeline of
/// appends, each event to its stream with the contract's fields and the dedup window on its id.
package final class RedisBrokerClient: BrokerClient {
    private let client: RedisClient
    private let streams: EventNameTemplate.Cache
    private let settings: RedisStreamSettings
    private let sinkName: String
    private var lastError: RedisError?

    private init(client: RedisClient, config: RedisSinkConfig, sinkName: String) {
        self.client = client
        self.streams = EventNameTemplate.Cache(EventNameTemplate(text: config.stream))
        self.settings = config.streamSettings
        self.sinkName = sinkName
    }

    /// Connects and checks the server answers (`PING`); an unreachable server or refused credentials are retriable
    /// (the runner retries with backoff; an operator may fix the credentials), an unusable setting is not.
    static func open(_ config: RedisSinkConfig, sinkName: String) async throws(SinkError) -> RedisBrokerClient {
        do {
            let client = RedisClient(settings: try config.clientSettings())
            try await client.ping()
            return RedisBrokerClient(client: client, config: config, sinkName: sinkName)
        } catch {
            throw SinkError(sink: sinkName, message: describe(error), isRetriable: error.kind != .configuration)
        }
    }

    /// The fields of an event's stream entry (contract: `id`, `type`, `collection`, `key`, `event`, `payload`, in
    /// this order): the sink's entries and the probe's test event (`check --send-test-event`) both come from here.
    static func fields(
        id: String, type: String, collection: String, key: String, event: String, payload: [UInt8]
    ) -> [RedisStreamEntry.Field] {
        [
            .init("id", Array(id.utf8)), .init("type", Array(type.utf8)), .init("collection", Array(collection.utf8)),
            .init("key", Array(key.utf8)), .init("event", Array(event.utf8)), .init("payload", payload),
        ]
    }

    package func submit(_ events: [EncodedEvent], completion: @escaping @Sendable (BrokerOutcomes) -> Void)
        async throws(SinkError)
    {
        let entries = events.map { event in
            RedisStreamEntry(
                stream: streams.name(for: event),
                dedupID: event.id,
                fields: Self.fields(
                    id: event.id, type: event.event.typeName, collection: event.collection, key: event.key,
                    event: event.event.rawValue, payload: event.body.bytes)
            )
        }
        do {
            let outcomes = try await client.append(entries, settings: settings)
            lastError = nil
            completion(BrokerOutcomes(outcomes.map(Self.outcome)))
        } catch {
            lastError = error
            completion(BrokerOutcomes(events.map { _ in .retry(Self.describe(error)) }))
        }
    }

    package var problem: String? { lastError.map(Self.describe) }

    /// Broken after a failure that closed the connection: the sink opens a new client (and reports while it cannot).
    package var isBroken: Bool { lastError != nil && !client.isConnected }

    package func close(drainTimeout: Duration) async {
        client.close()
    }

    private static func outcome(_ outcome: RedisStreamOutcome) -> BrokerOutcome {
        switch outcome {
        case .appended: .delivered(duplicate: false)
        case .duplicate: .delivered(duplicate: true)
        case .rejected(let error): .rejected(describe(error))
        }
    }

    /// The error with what to do about credentials.
    package static func describe(_ error: RedisError) -> String {
        error.kind == .authentication
            ? "\(error) (check the user and password in the sink's url, the user's ACL, and ca_file)"
            : "\(error)"
    }
}
