import BridgeSystem
public import BridgeTLS

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Why a WebSocket operation failed. `kind` says what happened; the optional fields carry the details that kind
/// has (HTTP status and body, close code and reason, the TLS error); `isRetriable` says whether reconnecting
/// later makes sense.
public struct WebSocketError: Error, Sendable, CustomStringConvertible {
    /// What happened.
    public enum Kind: Sendable, Equatable {
        /// The URL cannot be used (`description` says why). Not retriable.
        case invalidURL
        /// The request cannot be sent (e.g. a header with a line break). Not retriable.
        case invalidRequest
        /// `getaddrinfo` failed. Retriable (DNS may come back).
        case addressResolution
        /// No address accepted a TCP connection (refused, unreachable, timed out). Retriable.
        case connectFailed
        /// TLS failed; `tlsError` has the reason. Certificate problems are not retriable (`isCertificateProblem`).
        case tls
        /// The configured proxy answered `CONNECT` with a status other than 2xx; see `status`. Retriable, except 407
        /// (the proxy's credentials are wrong or missing).
        case proxyRefused
        /// The server answered the upgrade with a status other than 101; see `status` and `body`.
        case handshakeRejected
        /// The server answered 101 but broke the handshake rules (wrong `Sec-WebSocket-Accept`, missing headers,
        /// an extension we did not offer), or sent something that is not HTTP. Retriable.
        case invalidHandshake
        /// The connection is closed: by the peer's close frame (`closeCode`/`closeReason`, 1005 without a
        /// code), by a drop without a close frame (1006), or by our own `close`. Retriable.
        case closed
        /// The server broke RFC 6455; we sent close with `closeCode` (1002 or 1007). Retriable.
        case protocolViolation
        /// A message exceeded `maxMessageSize`; we sent close 1009. Retriable.
        case messageTooBig
        /// An operation did not finish in time (connect, handshake, a blocked write). Retriable.
        case timeout
        /// Reading or writing the socket failed (`underlying` has the errno). Retriable.
        case io
    }

    /// What happened.
    public var kind: Kind
    /// A human-readable summary (never contains the query string of the URL, which may hold a token).
    public var message: String
    /// The HTTP status of a rejected handshake.
    public var status: Int?
    /// The first bytes (at most 512) of a rejected handshake's body.
    public var body: [UInt8]
    /// `.closed`: the peer's close code (1005/1006 as described there). `.protocolViolation` and
    /// `.messageTooBig`: the code we sent.
    public var closeCode: UInt16?
    /// `.closed`: the peer's close reason.
    public var closeReason: String?
    /// The TLS failure behind a `.tls` error.
    public var tlsError: TLSError?
    /// The lower-level error (`SystemError`, `AddressResolutionError`, `TLSError`), when there is one.
    public var underlying: (any Error & Sendable)?

    /// Creates an error of `kind`.
    public init(
        _ kind: Kind,
        _ message: String,
        status: Int? = nil,
        body: [UInt8] = [],
        closeCode: UInt16? = nil,
        closeReason: String? = nil,
        tlsError: TLSError? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.kind = kind
        self.message = message
        self.status = status
        self.body = body
        self.closeCode = closeCode
        self.closeReason = closeReason
        self.tlsError = tlsError
        self.underlying = underlying ?? tlsError
    }

    /// The body of a rejected handshake as text (invalid UTF-8 repaired).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// Whether the server's certificate was rejected (unknown CA, expired, wrong host name).
    public var isCertificateProblem: Bool { tlsError?.isCertificateProblem ?? false }

    /// Whether reconnecting later may succeed.
    ///
    /// Not retriable: invalid URLs and requests, certificate and TLS configuration problems, and handshake
    /// rejections with 400, 401, 403 or 426 (bad request, credentials, permission, protocol version). A
    /// rejected handshake with any other status (404 while Directus starts, 429, 502, 503, …) is retriable.
    public var isRetriable: Bool {
        switch kind {
        case .invalidURL, .invalidRequest: false
        case .tls: tlsError?.isRetriable ?? true
        case .handshakeRejected: ![400, 401, 403, 426].contains(status ?? 0)
        case .proxyRefused: status != 407
        case .addressResolution, .connectFailed, .invalidHandshake, .closed, .protocolViolation, .messageTooBig,
            .timeout, .io:
            true
        }
    }

    /// The message, with the status, close code and underlying error when they add information.
    public var description: String {
        var text = message
        if kind == .handshakeRejected && !body.isEmpty {
            text += ": " + PeerText.prefix(bodyText, maximumLength: 200)  // bytes: a character may be huge
        }
        if let underlying, kind != .tls || tlsError == nil {
            // A message that already quotes its cause (every failed address of a connect) says it once.
            let cause = "\(underlying)"
            if !text.contains(cause) { text += " (\(cause))" }
        } else if let tlsError, !tlsError.errorStack.isEmpty {
            text += " [\(tlsError.errorStack.joined(separator: "; "))]"
        }
        return text
    }

    // MARK: - Construction helpers

    /// The connection ended with `info` (the peer's close, or 1006 for a drop).
    static func closed(_ info: WebSocketCloseInfo) -> WebSocketError {
        let how =
            info.code == CloseCode.abnormalClosure
            ? "connection closed without a close frame (1006)"
            : "connection closed by the peer: \(info)"
        return WebSocketError(.closed, how, closeCode: info.code, closeReason: info.reason)
    }

    /// The server broke the protocol and we closed with the error's code.
    static func violation(_ error: WebSocketProtocolError) -> WebSocketError {
        let kind: Kind = error.closeCode == CloseCode.messageTooBig ? .messageTooBig : .protocolViolation
        return WebSocketError(
            kind,
            "server broke the WebSocket protocol: \(error)",
            closeCode: error.closeCode,
            closeReason: error.reason
        )
    }

    /// Wraps a transport error (`SystemError`, `TLSError`) from reading or writing.
    static func transport(_ error: any Error, while operation: String) -> WebSocketError {
        if let error = error as? WebSocketError { return error }
        if let tls = error as? TLSError { return WebSocketError(.tls, "\(operation): \(tls.message)", tlsError: tls) }
        if let system = error as? SystemError {
            if system.errno == ETIMEDOUT {
                return WebSocketError(.timeout, "\(operation) timed out", underlying: system)
            }
            return WebSocketError(.io, "\(operation) failed", underlying: system)
        }
        return WebSocketError(.io, "\(operation) failed: \(error)")
    }
}
