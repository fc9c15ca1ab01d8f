internal import CCurl

/// The version of libcurl this process runs with, as the library itself reports it (`curl_version_info(CURLVERSION_NOW)->version`): the
/// version linked at run time, which `--version` shows, not the one the headers had at build time.
package enum CurlLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "libcurl"
    /// The version text (`1.2.3`).
    package static var version: String { String(cString: ccurl_version()) }
}
