/// A Kafka failure: what happened, in words a person can act on, and whether trying again makes sense.
///
/// Built from librdkafka's error codes (`KafkaError+Classification.swift`); no C type appears here, so callers
/// match on `kind` and `code` without importing librdkafka (the swift-kafka-client `RDKafkaCode` precedent).
package struct KafkaError: Error, Sendable, CustomStringConvertible {
    /// What a caller can do about an error.
    package enum Kind: String, Sendable, Equatable {
        /// Transient: a broker down or unreachable, a leader moving, a timeout, a full queue, a message purged at
        /// shutdown. The same message can succeed later.
        case retriable
        /// Credentials, TLS trust or ACLs were refused (SASL, TLS handshake, topic authorization). Trying again only
        /// helps after an operator fixed them.
        case authentication
        /// This producer instance can no longer deliver (an idempotence sequence broke, the producer was fenced):
        /// make a new producer and send again.
        case fatal
        /// The broker will never take this message (too large, an invalid topic name or record).
        case rejected
        /// The settings are wrong (an unknown or invalid librdkafka property, no bootstrap servers).
        case configuration
    }

    /// librdkafka's error code (`rd_kafka_resp_err_t`): negative values are local to the client, positive ones
    /// are Kafka protocol errors sent by a broker.
    package struct Code: Hashable, Sendable {
        /// The numeric code.
        package let rawValue: Int32

        /// Wraps a numeric code.
        package init(rawValue: Int32) { self.rawValue = rawValue }
    }

    /// What a caller can do about it.
    package var kind: Kind
    /// librdkafka's code (`Code.none` for errors of this layer, such as an invalid setting).
    package var code: Code
    /// What happened, for a person. Never contains a secret value.
    package var message: String
    /// Where the error was made (`#fileID`).
    package var file: String
    /// Where the error was made (`#line`).
    package var line: UInt

    /// Creates an error.
    package init(kind: Kind, code: Code = .none, message: String, file: String = #fileID, line: UInt = #line) {
        self.kind = kind
        self.code = code
        self.message = message
        self.file = file
        self.line = line
    }

    /// Whether sending the same message again, with this producer, can succeed.
    package var isRetriable: Bool { kind == .retriable }

    /// Whether the producer must be replaced before anything else can be delivered.
    package var requiresNewProducer: Bool { kind == .fatal }

    /// `kafka <kind> error (<code name>): <message>`.
    package var description: String {
        code == .none
            ? "kafka \(kind.rawValue) error: \(message)" : "kafka \(kind.rawValue) error (\(code)): \(message)"
    }
}

extension KafkaError.Code {
    /// No librdkafka code: an error of this layer.
    package static let none = Self(rawValue: 0)
    /// A broker connection failed or was closed (`_TRANSPORT`).
    package static let transport = Self(rawValue: -195)
    /// A message waited longer than `message.timeout.ms` (`_MSG_TIMED_OUT`).
    package static let messageTimedOut = Self(rawValue: -192)
    /// Every broker is down (`_ALL_BROKERS_DOWN`).
    package static let allBrokersDown = Self(rawValue: -187)
    /// A local operation timed out (`_TIMED_OUT`).
    package static let timedOut = Self(rawValue: -185)
    /// librdkafka's queue is full (`_QUEUE_FULL`).
    package static let queueFull = Self(rawValue: -184)
    /// Authentication failed (`_AUTHENTICATION`).
    package static let authentication = Self(rawValue: -169)
    /// The message was purged from the queue before it was sent (`_PURGE_QUEUE`).
    package static let purgedFromQueue = Self(rawValue: -152)
    /// The message was purged while in flight; it may or may not have been stored (`_PURGE_INFLIGHT`).
    package static let purgedInFlight = Self(rawValue: -151)
    /// A fatal error was raised (`_FATAL`); the producer's first fatal error tells which.
    package static let fatal = Self(rawValue: -150)
    /// The topic or partition does not exist (`UNKNOWN_TOPIC_OR_PART`).
    package static let unknownTopicOrPartition = Self(rawValue: 3)
    /// The broker is not the partition's leader (`NOT_LEADER_FOR_PARTITION`).
    package static let notLeaderForPartition = Self(rawValue: 6)
    /// The broker timed out the request (`REQUEST_TIMED_OUT`).
    package static let requestTimedOut = Self(rawValue: 7)
    /// The message is larger than the broker accepts (`MSG_SIZE_TOO_LARGE`).
    package static let messageSizeTooLarge = Self(rawValue: 10)
    /// Fewer in-sync replicas than `min.insync.replicas` (`NOT_ENOUGH_REPLICAS`).
    package static let notEnoughReplicas = Self(rawValue: 19)
    /// The principal may not write to the topic (`TOPIC_AUTHORIZATION_FAILED`).
    package static let topicAuthorizationFailed = Self(rawValue: 29)
    /// The principal may not use the cluster (`CLUSTER_AUTHORIZATION_FAILED`).
    package static let clusterAuthorizationFailed = Self(rawValue: 31)
    /// The producer's sequence numbers broke (`OUT_OF_ORDER_SEQUENCE_NUMBER`).
    package static let outOfOrderSequenceNumber = Self(rawValue: 45)
    /// SASL authentication failed (`SASL_AUTHENTICATION_FAILED`).
    package static let saslAuthenticationFailed = Self(rawValue: 58)
}
