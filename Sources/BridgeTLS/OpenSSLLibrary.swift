internal import COpenSSL

/// The version of OpenSSL this process runs with, as the library itself reports it (`OpenSSL_version(OPENSSL_VERSION_STRING)`): the
/// version linked at run time, which `--version` shows, not the one the headers had at build time.
package enum OpenSSLLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "OpenSSL"
    /// The version text (`1.2.3`).
    package static var version: String { String(cString: OpenSSL_version(OPENSSL_VERSION_STRING)) }
}
