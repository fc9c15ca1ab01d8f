package import BridgeSystem

/// An MQTT failure (`ClientError`): what happened, and whether publishing the same message again can succeed.
package typealias MQTTError = ClientError<MQTTErrorKind>

/// What a caller can do about an MQTT error.
package enum MQTTErrorKind: String, ClientErrorKind {
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

    package static let client = "mqtt"
    package var isRetriable: Bool { self == .retriable }
}
