import CCurl

/// Process-wide libcurl set-up, done exactly once before the first handle is made.
enum CurlGlobal {
    /// `curl_global_init` is not thread-safe itself; a Swift `static let` runs its initialiser once under
    /// `swift_once`, so every handle factory touches this first. Never cleaned up: handles live until exit.
    private static let initResult: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// Initialises libcurl if needed; throws when initialisation failed.
    static func ensureInitialized() throws(HTTPClientError) {
        let code = initResult
        guard code == CURLE_OK else {
            throw HTTPClientError(kind: .other, curlCode: Int(code.rawValue), message: "curl_global_init failed", url: "")
        }
    }

    /// The CA directory libcurl was built with (Debian: `/etc/ssl/certs`), if any.
    static let defaultCAPath: String? = ccurl_version_capath().map { String(cString: $0) }
}
