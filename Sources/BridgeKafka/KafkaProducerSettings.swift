internal import BridgeSystem

/// How to make a `KafkaProducer`.
///
/// The producer is always idempotent with `acks=all` (the contract's rule: an event counts as delivered only when
/// every in-sync replica has it, and retries never duplicate or reorder within a partition). Everything else
/// librdkafka can do (TLS, SASL, batching, compression) passes through `properties`.
package struct KafkaProducerSettings: Sendable, Equatable {
    /// Bootstrap servers, `host:port` each. Required.
    package var bootstrapServers: [String]
    /// librdkafka's own properties (`security.protocol`, `sasl.*`, `ssl.*`, `linger.ms`, `compression.type`, …),
    /// validated by librdkafka when the producer is made. The properties this layer sets itself are refused
    /// (`reservedProperties`). Default: none.
    package var properties: [String: String]
    /// The client id the brokers see. Default: `directus-bridge`.
    package var clientID: String
    /// The most messages produced and not yet reported at once; `submit` waits while this many are outstanding,
    /// so a broker that is down holds the caller instead of growing memory. Default: 50 000.
    package var maxOutstanding: Int
    /// How long librdkafka keeps trying to deliver a message before it reports it failed; nil keeps trying until
    /// the message is delivered or the producer is closed (a broker that is down is retried forever, events wait).
    /// Default: nil.
    package var deliveryTimeout: Duration?

    /// Creates settings.
    package init(
        bootstrapServers: [String],
        properties: [String: String] = [:],
        clientID: String = "directus-bridge",
        maxOutstanding: Int = 50_000,
        deliveryTimeout: Duration? = nil
    ) {
        self.bootstrapServers = bootstrapServers
        self.properties = properties
        self.clientID = clientID
        self.maxOutstanding = maxOutstanding
        self.deliveryTimeout = deliveryTimeout
    }

    /// Properties this layer sets and `properties` may not: the servers come from `bootstrapServers`, and
    /// idempotence with `acks=all` is the delivery rule itself. An event counts as delivered only on its delivery
    /// report, so nothing may silence or reroute reports (`delivery.report.only.error` left every delivered message
    /// unreported and the sink's cursor still; `enabled_events` moves reports off the callback the poll thread
    /// serves), and the producer opens no transactions (with `transactional.id` every message failed, retriable,
    /// forever).
    package static let reservedProperties: Set<String> = [
        "bootstrap.servers", "metadata.broker.list", "enable.idempotence", "acks", "request.required.acks",
        "message.timeout.ms", "delivery.timeout.ms", "client.id", "delivery.report.only.error", "enabled_events",
        "transactional.id",
    ]

    /// Why a reserved property cannot be configured, for the messages that refuse one.
    package static let reservedReason =
        "servers from brokers; an idempotent producer with acks=all, retried until delivered, every delivery "
        + "reported, no transactions"

    /// Whether a property's value is a secret, to be kept out of every message and log line.
    package static func isSecret(property name: String) -> Bool {
        let lowered = name.lowercased()
        return ["password", "secret", "jaas", "token", "key.pem", "oauthbearer.config", "credential"]
            .contains { lowered.contains($0) }
    }

    /// Every secret value of `properties` (for a `Redactor`).
    package var secretValues: [String] {
        properties.filter { Self.isSecret(property: $0.key) }.map(\.value)
    }

    /// The properties given to librdkafka, in order: ours first, then the caller's (already checked against
    /// `reservedProperties`). Throws a configuration error for an empty server list, a bad bound or a reserved key.
    func librdkafkaProperties() throws(KafkaError) -> [(key: String, value: String)] {
        let servers = bootstrapServers.map { $0.trimmingSpaces }.filter { !$0.isEmpty }
        guard !servers.isEmpty else {
            throw KafkaError(kind: .configuration, message: "no bootstrap servers: list at least one host:port")
        }
        guard maxOutstanding >= 1 && maxOutstanding <= 10_000_000 else {
            throw KafkaError(kind: .configuration, message: "max outstanding messages must be 1...10000000")
        }
        for key in properties.keys.sorted() where Self.reservedProperties.contains(key.trimmingSpaces) {
            throw KafkaError(
                kind: .configuration,
                message: "property \(key) is set by the bridge (\(Self.reservedReason))"
            )
        }
        // 0 = forever: librdkafka retries until the message is delivered or the producer is closed.
        let timeoutMilliseconds = deliveryTimeout.map { max(1, min($0.roundedUpMilliseconds, Int64(Int32.max))) } ?? 0
        var result: [(key: String, value: String)] = [
            ("bootstrap.servers", servers.joined(separator: ",")),
            ("client.id", clientID),
            ("enable.idempotence", "true"),
            ("acks", "all"),
            ("message.timeout.ms", String(timeoutMilliseconds)),
            // librdkafka's own queue must hold at least what this layer lets out, or produce would fail with
            // _QUEUE_FULL while the bound says there is room.
            ("queue.buffering.max.messages", String(max(maxOutstanding, 100_000))),
        ]
        for key in properties.keys.sorted() { result.append((key, properties[key] ?? "")) }
        return result
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
            let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })
        else { return "" }
        return String(scalars[first...last])
    }
}
