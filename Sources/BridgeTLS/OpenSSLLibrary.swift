internal import COpenSSL
internal import COpenSSLInit

/// The version of OpenSSL this process runs with, as the library reports it: `OpenSSL_version(OPENSSL_VERSION_STRING)`,
/// the version linked at run time (`--version` shows it), not the headers' at build time.
package enum OpenSSLLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "OpenSSL"
    /// The version text (`1.2.3`).
    package static var version: String { String(cString: OpenSSL_version(OPENSSL_VERSION_STRING)) }
    /// Whether OpenSSL was set up before main to keep its state until the process is gone, instead of freeing it at
    /// exit under threads that may still use it (Sources/COpenSSLInit/openssl_init.c).
    package static var keepsStateAtExit: Bool { copenssl_init_keeps_state_at_exit() == 1 }
}
