internal import COpenSSL

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// An OpenSSL client context (`SSL_CTX`) configured from a `TLSConfiguration`: TLS 1.2+, the system trust store
/// plus an optional CA file, peer verification. Owns the `SSL_CTX` and frees it in `deinit`.
package final class TLSContext: @unchecked Sendable {
    // @unchecked: the SSL_CTX is fully configured in `make` and never changed afterwards; OpenSSL allows an
    // unchanging SSL_CTX to create SSL objects from several threads at once (ssl(7), "thread safety").
    let handle: OpaquePointer
    /// The configuration the context was built from.
    package let configuration: TLSConfiguration

    private init(handle: OpaquePointer, configuration: TLSConfiguration) {
        self.handle = handle
        self.configuration = configuration
    }

    deinit {
        SSL_CTX_free(handle)  // SSL objects hold their own reference, so live streams keep working.
    }

    /// The directory of the system trust store (hashed links; certificates are loaded on demand).
    static let systemCertificateDirectory = "/etc/ssl/certs"

    /// Builds a client context. Throws `TLSError` (`.configuration`) when the CA file cannot be loaded.
    package static func make(configuration: TLSConfiguration) throws -> TLSContext {
        OpenSSLErrorQueue.clear()
        guard let handle = SSL_CTX_new(TLS_client_method()) else {
            throw TLSError(kind: .configuration, message: "SSL_CTX_new failed", errorStack: OpenSSLErrorQueue.drain())
        }
        let context = TLSContext(handle: handle, configuration: configuration)  // frees handle on throw below
        let version = configuration.minimumVersion == .tls13 ? TLS1_3_VERSION : TLS1_2_VERSION
        guard copenssl_ctx_set_min_proto_version(handle, version) == 1 else {
            throw TLSError(
                kind: .configuration,
                message: "cannot set the minimum TLS version",
                errorStack: OpenSSLErrorQueue.drain()
            )
        }
        _ = SSL_CTX_set_options(handle, copenssl_client_options())
        _ = copenssl_ctx_set_mode(handle, copenssl_client_modes())

        // System store: SSL_CERT_FILE/SSL_CERT_DIR or the compiled-in defaults, plus the Debian directory, which
        // the defaults point to on Debian but not on every build of OpenSSL. Failures here are not fatal (a
        // missing directory just trusts less); verification reports what is missing.
        _ = SSL_CTX_set_default_verify_paths(handle)
        if access(systemCertificateDirectory, R_OK) == 0 {
            _ = SSL_CTX_load_verify_locations(handle, nil, systemCertificateDirectory)
        }
        OpenSSLErrorQueue.clear()
        if let caFile = configuration.caFile, !caFile.isEmpty {
            guard SSL_CTX_load_verify_locations(handle, caFile, nil) == 1 else {
                throw TLSError(
                    kind: .configuration,
                    message: "cannot load CA file \(caFile)",
                    errorStack: OpenSSLErrorQueue.drain()
                )
            }
        }
        SSL_CTX_set_verify(handle, configuration.insecureSkipVerify ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, nil)
        return context
    }
}
