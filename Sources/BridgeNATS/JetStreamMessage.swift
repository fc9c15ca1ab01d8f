/// One message to publish to JetStream.
package struct JetStreamMessage: Sendable, Equatable {
    /// The subject; it must fall into a stream.
    package var subject: String
    /// The `Nats-Msg-Id` header: the server drops a message whose id it stored within the stream's duplicate
    /// window, so a re-sent message is stored once.
    package var messageID: String
    /// Messages with the same ordering key are stored in the order submitted: the next one is published only
    /// after the previous one was acknowledged (or failed for good), so a retry never lands behind a later
    /// message of the same item. nil orders the message with no other.
    package var orderingKey: String?
    /// The payload bytes.
    package var payload: [UInt8]

    /// Creates a message.
    package init(subject: String, messageID: String, orderingKey: String? = nil, payload: [UInt8]) {
        self.subject = subject
        self.messageID = messageID
        self.orderingKey = orderingKey
        self.payload = payload
    }
}

/// A publish acknowledgement: the stream stored the message (or already had it).
package struct JetStreamAck: Sendable, Equatable {
    /// The stream's name.
    package var stream: String
    /// The stream sequence of the stored message.
    package var sequence: UInt64
    /// Whether the stream already had a message with this `Nats-Msg-Id` (a re-send; stored once).
    package var duplicate: Bool

    /// Creates an acknowledgement.
    package init(stream: String, sequence: UInt64, duplicate: Bool) {
        self.stream = stream
        self.sequence = sequence
        self.duplicate = duplicate
    }
}

/// What became of one published message.
package enum JetStreamOutcome: Sendable {
    /// The stream acknowledged it.
    case acknowledged(JetStreamAck)
    /// It was not stored, and will not be retried by the publisher (an error that retrying cannot fix, or the
    /// publisher was closed first).
    case failed(NATSError)

    /// The acknowledgement, when stored.
    package var ack: JetStreamAck? {
        if case .acknowledged(let ack) = self { return ack }
        return nil
    }

    /// The error, when not stored.
    package var error: NATSError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}

/// How a `JetStreamPublisher` publishes.
package struct JetStreamPublisherSettings: Sendable, Equatable {
    /// The most messages submitted and not yet acknowledged (published, or waiting for their turn or a retry);
    /// `submit` waits while this many are held. Default: 4096.
    package var maxOutstanding: Int
    /// How long to wait for one publish acknowledgement before publishing the message again. Default: 5 s.
    package var ackTimeout: Duration
    /// The first wait before a retriable failure is retried; it doubles per failure of the same message up to
    /// `maxRetryDelay`. Default: 100 ms.
    package var retryDelay: Duration
    /// The longest wait between retries. Default: 5 s.
    package var maxRetryDelay: Duration

    /// Creates settings.
    package init(
        maxOutstanding: Int = 4096,
        ackTimeout: Duration = .seconds(5),
        retryDelay: Duration = .milliseconds(100),
        maxRetryDelay: Duration = .seconds(5)
    ) {
        self.maxOutstanding = maxOutstanding
        self.ackTimeout = ackTimeout
        self.retryDelay = retryDelay
        self.maxRetryDelay = maxRetryDelay
    }
}

/// NATS's rule for subjects: dot-separated tokens of printable ASCII without spaces; publish subjects have no
/// wildcards. Quotes and backslashes are refused too: libnats copies a probe's subject into JSON unescaped.
package enum NATSSubject {
    /// Throws a `rejected` error naming what is wrong with `subject`.
    package static func validate(_ subject: String, wildcards: Bool = false) throws(NATSError) {
        let bytes = Array(subject.utf8)
        let printable = bytes.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }
        let tokens = subject.split(separator: ".", omittingEmptySubsequences: false)
        let wildcardFree = wildcards || !tokens.contains { $0 == "*" || $0 == ">" }
        guard !bytes.isEmpty, bytes.count <= 1024, printable, !tokens.contains(where: \.isEmpty), wildcardFree else {
            throw NATSError(kind: .rejected, message: "invalid NATS subject \"\(subject.prefix(80))\"")
        }
    }
}
