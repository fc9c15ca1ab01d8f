/// A NATS or JetStream failure: what happened, in words a person can act on, and whether trying again makes sense.
///
/// Built from libnats's `natsStatus` and JetStream's API error codes (`NATSError+Status.swift`); no C type
/// appears here.
package struct NATSError: Error, Sendable, CustomStringConvertible {
    /// What a caller can do about an error.
    package enum Kind: String, Sendable, Equatable {
        /// Transient: no server reachable, a timeout, no responder yet (a stream leader being elected), a full
        /// buffer. The same publish can succeed later.
        case retriable
        /// Credentials or TLS trust were refused, or the user may not publish there. Trying again only helps after
        /// an operator fixed them.
        case authentication
        /// The connection is closed for good: make a new one.
        case fatal
        /// The server will never take this message (larger than its maximum payload, refused by the stream).
        case rejected
        /// The settings are wrong (no server, an unreadable credentials or CA file, an invalid subject).
        case configuration
        /// A key-value write expected a revision the key no longer has (JetStream's "wrong last sequence"):
        /// another writer got there first. Never retried over: the caller must read again, or give way.
        case conflict
    }

    /// What a caller can do about it.
    package var kind: Kind
    /// libnats's status code (`natsStatus`), 0 for errors of this layer.
    package var status: Int32
    /// JetStream's API error code (10000 and up) when the server sent one, else 0.
    package var jetStreamCode: Int
    /// What happened, for a person. Never contains a secret.
    package var message: String
    /// Where the error was made (`#fileID`).
    package var file: String
    /// Where the error was made (`#line`).
    package var line: UInt

    /// Creates an error.
    package init(
        kind: Kind,
        status: Int32 = 0,
        jetStreamCode: Int = 0,
        message: String,
        file: String = #fileID,
        line: UInt = #line
    ) {
        self.kind = kind
        self.status = status
        self.jetStreamCode = jetStreamCode
        self.message = message
        self.file = file
        self.line = line
    }

    /// Whether publishing the same message again, on this connection, can succeed.
    package var isRetriable: Bool { kind == .retriable }

    /// Whether the TLS handshake or certificate check failed, or one side required TLS and the other would not (a
    /// `.authentication` kind too: trying again helps only after an operator fixed it), said as such rather than as
    /// refused credentials.
    package var isTLSFailure: Bool {
        Self.tlsStatuses.contains(status)
    }

    /// `nats <kind> error: <message>`; `nats tls error: <message>` for a TLS failure.
    package var description: String { "nats \(isTLSFailure ? "tls" : kind.rawValue) error: \(message)" }
}
