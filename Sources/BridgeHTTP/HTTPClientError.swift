import BridgeSystem

/// A request that produced no usable response: the transfer failed before a complete response arrived.
///
/// HTTP error statuses are not errors here: a 503 is a response, and the caller decides what it means.
public struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, coarsely, for retry decisions and messages.
    public enum Kind: String, Sendable, Equatable {
        /// The host name did not resolve.
        case couldNotResolve
        /// The TCP connection was refused or could not be made.
        case couldNotConnect
        /// The connect or request time limit passed.
        case timeout
        /// The TLS handshake or certificate verification failed (see `message` for curl's reason).
        case tls
        /// Sending the request failed mid-way.
        case sendFailed
        /// Receiving the response failed mid-way (reset, empty reply, truncated body).
        case receiveFailed
        /// The response was larger than allowed (`maxResponseBytes` with `.fail`, or huge headers).
        case tooLarge
        /// The calling task was cancelled or the client was shut down.
        case cancelled
        /// Anything else (bad URL, unsupported protocol, internal curl failure).
        case other
    }

    /// The coarse kind.
    public var kind: Kind
    /// The libcurl result code (`CURLcode`), 0 when the failure did not come from curl.
    public var curlCode: Int
    /// curl's detailed message (its error buffer), or its generic text for the code, with any URL in it shown as
    /// `url` is.
    public var message: String
    /// The request URL as the bridge shows URLs (`ShownURL`): `scheme://host:port`, without the path, query or user
    /// information, which may hold a token (a Slack hook's is its path).
    public var url: String

    /// Creates an error; `url`, and any URL `message` quotes, are reduced to `scheme://host:port` here.
    public init(kind: Kind, curlCode: Int = 0, message: String, url: String) {
        self.kind = kind
        self.curlCode = curlCode
        self.message = ShownURL.scrubbing(message)
        self.url = url.isEmpty ? "" : ShownURL.of(url)
    }

    /// Whether trying again later can succeed: connection-level and time-out failures yes; TLS trust,
    /// bad URLs, oversized responses and cancellation no.
    public var isRetriable: Bool {
        switch kind {
        case .couldNotResolve, .couldNotConnect, .timeout, .sendFailed, .receiveFailed: true
        case .tls, .tooLarge, .cancelled, .other: false
        }
    }

    /// `kind (curl N): message [url]`.
    public var description: String {
        "HTTP request failed: \(kind.rawValue) (curl \(curlCode)): \(message) [\(url)]"
    }
}
