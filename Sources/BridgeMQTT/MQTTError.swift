/// An MQTT failure: what happened, in words a person can act on, and whether trying again makes sense.
///
/// No C type appears here; messages never contain a password.
package struct MQTTError: Error, Sendable, CustomStringConvertible {
    /// What a caller can do about an error.
    package enum Kind: String, Sendable, Equatable {
        /// Transient: the broker is unreachable or restarting, the connection broke, no acknowledgement in time.
        /// The same publish can succeed later.
        case retriable
        /// The broker refused the credentials or the client, TLS trust failed, or the client may not publish to a
        /// topic. Trying again only helps after an operator fixed them.
        case authentication
        /// The broker refused this one message for good (a topic or payload it will not take).
        case rejected
        /// The settings cannot work (a bad URL, topic, unreadable CA file).
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

    /// `mqtt <kind> error: <message>`.
    package var description: String { "mqtt \(kind.rawValue) error: \(message)" }
}
