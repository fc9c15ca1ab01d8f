/// What a caller can do about a failure of one client (a broker or server client: Redis, AMQP, MQTT): the kinds of
/// that client's errors. Each client declares its own, so its errors stay a type of their own (`throws(RedisError)`).
package protocol ClientErrorKind: RawRepresentable, Sendable, Equatable where RawValue == String {
    /// The client's name, first in an error's description (`redis`, `amqp`, `mqtt`).
    static var client: String { get }
    /// Whether doing the same again (on a new connection, for one that broke) can succeed.
    var isRetriable: Bool { get }
}

/// A client's failure: what happened, in words a person can act on, and whether trying again makes sense.
///
/// No C type appears here; messages never contain a password (each client redacts what the server or the system
/// says before it lands here).
package struct ClientError<K: ClientErrorKind>: Error, Sendable, CustomStringConvertible {
    /// The client's kinds of error (`RedisError.Kind.retriable`).
    package typealias Kind = K

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

    /// Whether doing the same again can succeed.
    package var isRetriable: Bool { kind.isRetriable }

    /// `<client> <kind> error: <message>`.
    package var description: String { "\(Kind.client) \(kind.rawValue) error: \(message)" }
}
