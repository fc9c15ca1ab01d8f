internal import CMicroHTTPD

/// The version of libmicrohttpd this process runs with, as the library itself reports it (`MHD_get_version()`): the
/// version linked at run time, which `--version` shows, not the one the headers had at build time.
package enum MicroHTTPDLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "libmicrohttpd"
    /// The version text (`1.2.3`).
    package static var version: String { String(cString: MHD_get_version()) }
}
