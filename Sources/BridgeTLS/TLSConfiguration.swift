/// How a TLS client verifies servers (`directus.tls` in bridge.yaml).
///
/// The system trust store (`/etc/ssl/certs`, or `SSL_CERT_FILE`/`SSL_CERT_DIR` when set) is always used.
public struct TLSConfiguration: Sendable, Equatable {
    /// The lowest protocol version the client accepts.
    public enum MinimumVersion: Sendable, Equatable {
        /// TLS 1.2 and 1.3.
        case tls12
        /// TLS 1.3 only.
        case tls13
    }

    /// A PEM file of extra CA certificates trusted in addition to the system store (a private CA).
    /// Default: `nil`.
    public var caFile: String?
    /// Accepts any certificate for any host name. For tests only: it removes all protection against
    /// impostors. Default: `false`.
    public var insecureSkipVerify: Bool
    /// The lowest TLS version accepted. Default: `.tls12`.
    public var minimumVersion: MinimumVersion

    /// Creates a configuration; the defaults verify against the system store with TLS 1.2 or newer.
    public init(caFile: String? = nil, insecureSkipVerify: Bool = false, minimumVersion: MinimumVersion = .tls12) {
        self.caFile = caFile
        self.insecureSkipVerify = insecureSkipVerify
        self.minimumVersion = minimumVersion
    }
}
