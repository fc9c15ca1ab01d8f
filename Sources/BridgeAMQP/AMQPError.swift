package import BridgeSystem

/// An AMQP failure (`ClientError`): what happened, and whether publishing the same message again can succeed.
package typealias AMQPError = ClientError<AMQPErrorKind>

/// What a caller can do about an AMQP error.
package enum AMQPErrorKind: String, ClientErrorKind {
    /// Transient: the broker is unreachable or restarting, the connection broke, a nack, no confirm in time.
    /// The same publish can succeed later.
    case retriable
    /// The credentials or the vhost were refused (403 ACCESS_REFUSED), or TLS trust failed. Trying again only
    /// helps after an operator fixed them.
    case authentication
    /// The settings cannot work: a bad URL, an exchange that does not exist (404), an unreadable CA file.
    case configuration

    package static let client = "amqp"
    package var isRetriable: Bool { self == .retriable }
}

extension ClientError where K == AMQPErrorKind {
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
