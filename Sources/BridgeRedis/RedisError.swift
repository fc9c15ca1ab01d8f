package import BridgeSystem

/// A Redis failure (`ClientError`): what happened, and whether sending the same command again (on a new connection,
/// for a broken one) can succeed. The client redacts what the server or the system says before it lands here.
package typealias RedisError = ClientError<RedisErrorKind>

/// What a caller can do about a Redis error.
package enum RedisErrorKind: String, ClientErrorKind {
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

    package static let client = "redis"
    package var isRetriable: Bool { self == .retriable || self == .protocolViolation }
}

extension ClientError where K == RedisErrorKind {
    /// Whether the connection that produced it can no longer be used.
    package var breaksConnection: Bool { kind != .rejected }

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
