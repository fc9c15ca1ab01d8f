internal import COpenSSL

/// The version of OpenSSL this process runs with, as the library reports it: `OpenSSL_version(OPENSSL_VERSION_STRING)`,
/// the version linked at run time (`--version` shows it), not the headers' at build time.
package enum OpenSSLLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "OpenSSL"
    /// The version text (`1.2.3`).
    package static var version: String { String(cString: OpenSSL_version(OPENSSL_VERSION_STRING)) }
}
