/// An AMQP failure: what happened, in words a person can act on, and whether trying again makes sense.
///
/// No C type appears here; messages never contain a password.
package struct AMQPError: Error, Sendable, CustomStringConvertible {
    /// What a caller can do about an error.
    package enum Kind: String, Sendable, Equatable {
        /// Transient: the broker is unreachable or restarting, the connection broke, a nack, no confirm in time.
        /// The same publish can succeed later.
        case retriable
        /// The credentials or the vhost were refused (403 ACCESS_REFUSED), or TLS trust failed. Trying again only
        /// helps after an operator fixed them.
        case authentication
        /// The settings cannot work: a bad URL, an exchange that does not exist (404), an unreadable CA file.
        case configuration
    }

    /// What a caller can do about it.
    package var kind: Kind
    /// What happened, for a person. Never contains a secret.
    package var message: String
    /// Where the error was made (`#fileID`).
    package var file: String
    /// Where the error was made (`#line`).
    package var line: UInt

    /// Creates an error.
    package init(kind: Kind, message: String, file: String = #fileID, line: UInt = #line) {
        self.kind = kind
        self.message = message
        self.file = file
        self.line = line
    }

    /// Whether publishing the same message again can succeed.
    package var isRetriable: Bool { kind == .retriable }

    /// `amqp <kind> error: <message>`.
    package var description: String { "amqp \(kind.rawValue) error: \(message)" }

    /// The error for an AMQP reply code (the broker closed the channel or connection with it).
    static func fromReply(code: Int, text: String, context: String) -> AMQPError {
        let kind: Kind =
            switch code {
            case 403, 530: .authentication  // ACCESS_REFUSED, NOT_ALLOWED (e.g. no such vhost)
            case 404: .configuration  // NOT_FOUND: the exchange does not exist
            default: .retriable
            }
        return AMQPError(kind: kind, message: "\(context): \(text) (\(code))")
    }
}
