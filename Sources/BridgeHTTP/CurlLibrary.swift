internal import CCurl

/// The version of libcurl this process runs with, as the library reports it:
/// `curl_version_info(CURLVERSION_NOW)->version`, the version linked at run time (`--version` shows it), not the
/// headers' at build time.
package enum CurlLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "libcurl"
    /// The version text (`1.2.3`).
    package static var version: String { String(cString: ccurl_version()) }
}
