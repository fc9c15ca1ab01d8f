import CCurl

extension CurlEasyHandle {
    /// Opens and closes this transfer's connections through `events` (CURLOPT_OPENSOCKETFUNCTION,
    /// CURLOPT_CLOSESOCKETFUNCTION), so that it knows which sockets it may keep in its epoll set between transfers.
    /// Set after each `prepare` (its `curl_easy_reset` clears them); `events` outlives the connections (it is held
    /// by the multi handle, see `CurlSocketEvents`).
    func setSocketCallbacks(_ events: CurlSocketEvents) throws(HTTPClientError) {
        let context = Unmanaged.passUnretained(events).toOpaque()
        let code = ccurl_easy_set_socket_callbacks(raw, curlOpenSocketCallback, curlCloseSocketCallback, context)
        guard code == CURLE_OK else { throw makeError(code: code) }
    }
}
