/// A Redis failure: what happened, in words a person can act on, and whether trying again makes sense.
///
/// No C type appears here; messages never contain a password (the client redacts what the server or the
/// system says before it lands here).
package struct RedisError: Error, Sendable, CustomStringConvertible {
    /// What a caller can do about an error.
    package enum Kind: String, Sendable, Equatable {
        /// Transient: the server is unreachable, restarting (`LOADING`), busy, timed out, or the connection broke.
        /// The same command can succeed on a new connection later.
        case retriable
        /// The credentials were refused (`WRONGPASS`, `NOAUTH`) or the user may not run a command (`NOPERM`), or
        /// TLS trust failed. Trying again only helps after an operator fixed them.
        case authentication
        /// The server refused this one command for good (`WRONGTYPE`, a script error, a value it cannot take).
        case rejected
        /// The settings cannot work (a bad URL, database number, unreadable CA file).
        case configuration
        /// The server broke the protocol (a malformed or oversized reply, an answer of the wrong type): the
        /// connection is dropped; a new one may meet a sane server.
        case protocolViolation
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

    /// Whether sending the same command again (on a new connection, for a broken one) can succeed.
    package var isRetriable: Bool { kind == .retriable || kind == .protocolViolation }

    /// Whether the connection that produced it can no longer be used.
    package var breaksConnection: Bool { kind != .rejected }

    /// `redis <kind> error: <message>`.
    package var description: String { "redis \(kind.rawValue) error: \(message)" }

    /// The error for a server's error reply `text` (its first word is Redis's error code), prefixed by `context`.
    package static func fromServer(_ text: String, context: String) -> RedisError {
        let code = text.prefix { $0 != " " }
        let kind: Kind
        switch code {
        case "WRONGPASS", "NOAUTH", "NOPERM": kind = .authentication
        case "LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "READONLY", "OOM", "MISCONF", "NOREPLICAS":
            // OOM (maxmemory reached) and MISCONF (persistence failing) heal when the operator or the server frees
            // memory or disk: retried, never dropped.
            kind = .retriable
        case "NOSCRIPT": kind = .retriable  // the client loads the script again and retries
        default: kind = .rejected
        }
        return RedisError(kind: kind, message: context + ": " + text)
    }
}
