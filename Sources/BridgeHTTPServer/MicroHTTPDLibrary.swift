internal import CMicroHTTPD

/// The version of libmicrohttpd this process runs with, as the library reports it:
/// `MHD_get_version()`, the version linked at run time (`--version` shows it), not the headers' at build time.
package enum MicroHTTPDLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "libmicrohttpd"
    /// The version text (`1.2.3`).
    package static var version: String { String(cString: MHD_get_version()) }
}
