/// A TLS failure: bad configuration, a certificate the client does not trust, a failed handshake, or an error on
/// an established session. Carries OpenSSL's reasons so the log says what went wrong.
public struct TLSError: Error, Sendable, CustomStringConvertible {
    /// What failed.
    public enum Kind: Sendable, Equatable {
        /// The configuration cannot be used (unreadable or invalid CA file).
        case configuration
        /// The server's certificate was rejected: unknown CA, expired, wrong host name, …
        case certificateVerification
        /// The handshake failed for another reason (protocol version, cipher, connection reset).
        case handshake
        /// An established session failed (corrupt record, reset).
        case session
    }

    /// What failed.
    public var kind: Kind
    /// A one-line summary, e.g. `certificate verification failed: certificate has expired`.
    public var message: String
    /// The `X509_V_ERR_*` code when a certificate was rejected.
    public var verifyCode: Int?
    /// `X509_verify_cert_error_string` for `verifyCode`, e.g. `hostname mismatch`.
    public var verifyReason: String?
    /// OpenSSL's error queue at the failure, oldest first (`error:0A000086:SSL routines::certificate verify failed`).
    public var errorStack: [String]

    /// Creates an error.
    public init(
        kind: Kind,
        message: String,
        verifyCode: Int? = nil,
        verifyReason: String? = nil,
        errorStack: [String] = []
    ) {
        self.kind = kind
        self.message = message
        self.verifyCode = verifyCode
        self.verifyReason = verifyReason
        self.errorStack = errorStack
    }

    /// Whether the server's certificate was the problem. Such errors do not heal by retrying the same server,
    /// so callers should not retry by default; an operator has to fix the certificate or the trust settings.
    public var isCertificateProblem: Bool { kind == .certificateVerification }

    /// Handshake and session failures may be transient (a restarting proxy); configuration and certificate
    /// problems are not.
    public var isRetriable: Bool { kind == .handshake || kind == .session }

    /// The message followed by the OpenSSL error stack.
    public var description: String {
        errorStack.isEmpty ? message : "\(message) [\(errorStack.joined(separator: "; "))]"
    }
}
