import BridgeSystem
internal import BridgeEvents

/// A failed Directus REST call: the server's error envelope (docs/directus-protocol.md §8.1), a transport failure, or
/// an answer we cannot use.
///
/// Says whether retrying makes sense and whether it means "the credentials are not accepted", because those
/// decide between backing off, re-logging in and exiting 77.
public struct DirectusError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// Directus answered with an error status (`errors[0].extensions.code` when present).
        case rejected
        /// No usable HTTP answer (connection refused, timeout, TLS).
        case transport
        /// A 2xx answer we could not read (not JSON, missing fields).
        case invalidResponse
        /// The answer was longer than the request's size limit: the same request gets the same answer, so it is
        /// not retried as it is — the caller asks for less (fewer keys, a page of one) or for a higher limit.
        case tooLarge
    }

    /// The kind.
    public var kind: Kind
    /// The HTTP status, when there was an answer.
    public var status: Int?
    /// The Directus error code (`INVALID_CREDENTIALS`, `TOKEN_EXPIRED`, `FORBIDDEN`, …).
    public var code: String?
    /// A message for a person (Directus's own text, or the transport error); never contains a token.
    public var message: String
    /// The operation, e.g. `POST /auth/login`.
    public var operation: String
    /// Whether the transport error was retriable (only meaningful for `.transport`).
    package var transportRetriable: Bool = true
    /// Whether the TLS handshake failed: most often a certificate that the system store and
    /// `directus.tls.ca_file` do not trust, which no retry fixes by itself.
    public internal(set) var isTLSFailure = false

    /// At most this many UTF-8 bytes of a message are kept: Directus's text (or a proxy's) must not make an error
    /// megabytes long. Kept raw otherwise, so that logs and `check` can redact it before they clean it (`PeerText`).
    public static let maximumMessageLength = 4096
    /// At most this many UTF-8 bytes of a code are kept (Directus's codes are short words).
    public static let maximumCodeLength = 64

    /// Creates an error; `message` and `code`, which may come from the server, are bounded here.
    public init(kind: Kind, status: Int? = nil, code: String? = nil, message: String, operation: String) {
        self.kind = kind
        self.status = status
        self.code = code.map { PeerText.prefix($0, maximumLength: Self.maximumCodeLength) }
        self.message = PeerText.prefix(message, maximumLength: Self.maximumMessageLength)
        self.operation = operation
    }

    /// Whether the same call may succeed later: transport failures, 5xx, 429, 408.
    public var isRetriable: Bool {
        switch kind {
        case .transport: return transportRetriable
        case .invalidResponse: return true
        case .tooLarge: return false
        case .rejected:
            guard let status else { return true }
            return status >= 500 || status == 429 || status == 408
        }
    }

    /// Whether Directus refused who we are (wrong password, revoked token, suspended user) — not a permission
    /// problem on one collection.
    public var isCredentialsRejected: Bool {
        guard kind == .rejected else { return false }
        switch code {
        case "INVALID_CREDENTIALS", "INVALID_OTP", "USER_SUSPENDED", "AUTH_FAILED": return true
        case nil: return status == 401
        default: return false
        }
    }

    /// Whether the access token is expired or invalid (refresh and try again).
    public var isTokenExpired: Bool {
        kind == .rejected && (code == "TOKEN_EXPIRED" || code == "INVALID_TOKEN")
    }

    /// Whether the call was refused for lack of permission (403 FORBIDDEN).
    public var isForbidden: Bool { kind == .rejected && (code == "FORBIDDEN" || (code == nil && status == 403)) }

    public var description: String {
        var text = operation + ": "
        if let status { text += "HTTP \(status) " }
        if let code { text += code + ": " }
        return text + message
    }
}
