/// One message to publish: persistent, `content_type` `application/json`, mandatory.
package struct AMQPMessage: Sendable, Equatable {
    /// One header (a string value).
    package struct Header: Sendable, Equatable {
        /// The header's name.
        package var name: String
        /// The header's value.
        package var value: String

        /// Creates a header.
        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The exchange ("" is the default exchange).
    package var exchange: String
    /// The routing key.
    package var routingKey: String
    /// `message_id` (the event id).
    package var messageID: String
    /// Headers (at most 16).
    package var headers: [Header]
    /// The body.
    package var body: [UInt8]

    /// Creates a message.
    package init(exchange: String, routingKey: String, messageID: String, headers: [Header] = [], body: [UInt8]) {
        self.exchange = exchange
        self.routingKey = routingKey
        self.messageID = messageID
        self.headers = headers
        self.body = body
    }
}

/// What became of one message.
package enum AMQPOutcome: Sendable {
    /// The broker confirmed it (basic.ack) and routed it to at least one queue.
    case confirmed
    /// The broker could route it to no queue (basic.return, e.g. 312 NO_ROUTE) and confirmed only that: it is
    /// nowhere. Sending it again changes nothing until a queue is bound: a dead letter.
    case returned(String)
    /// Not confirmed: the error says whether a retry can help.
    case failed(AMQPError)

    /// Whether the broker has it in a queue.
    package var isConfirmed: Bool {
        if case .confirmed = self { return true }
        return false
    }
}
