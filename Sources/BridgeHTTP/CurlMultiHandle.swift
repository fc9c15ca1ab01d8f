import CCurl

/// Owner of one libcurl multi handle (`CURLM *`): many transfers driven from one thread.
///
/// Confined to the thread that drives it; only `waker` may be used elsewhere. Every easy handle added
/// must be removed before this object is released.
final class CurlMultiHandle {
    /// The C handle, freed in deinit.
    let raw: UnsafeMutableRawPointer

    private init(raw: UnsafeMutableRawPointer) {
        self.raw = raw
    }

    /// Makes a multi handle.
    static func make() throws(HTTPClientError) -> CurlMultiHandle {
        try CurlGlobal.ensureInitialized()
        guard let raw = curl_multi_init() else {
            throw HTTPClientError(kind: .other, message: "curl_multi_init failed", url: "")
        }
        return CurlMultiHandle(raw: raw)
    }

    deinit {
        curl_multi_cleanup(raw)  // closes the connection cache this handle owns
    }

    /// A thread-safe handle for `curl_multi_wakeup`, valid while this object lives.
    var waker: CurlMultiWaker { CurlMultiWaker(raw: raw) }

    /// Sets a numeric multi option.
    func setOption(_ option: CURLMoption, _ value: Int) throws(HTTPClientError) {
        try check(ccurl_multi_setopt_long(raw, option, value), "curl_multi_setopt")
    }

    /// Starts driving `easy`'s prepared transfer.
    func add(_ easy: CurlEasyHandle) throws(HTTPClientError) {
        try check(curl_multi_add_handle(raw, easy.raw), "curl_multi_add_handle")
    }

    /// Stops driving `easy`; an unfinished transfer is aborted and its connection closed.
    func remove(_ easy: CurlEasyHandle) {
        curl_multi_remove_handle(raw, easy.raw)
    }

    /// Runs every transfer as far as it goes without blocking; returns how many are still running.
    @discardableResult
    func perform() throws(HTTPClientError) -> Int {
        var running: Int32 = 0
        try check(curl_multi_perform(raw, &running), "curl_multi_perform")
        return Int(running)
    }

    /// Sleeps until a socket is ready, curl's next timer, `timeoutMilliseconds`, or a wake-up.
    func poll(timeoutMilliseconds: Int) throws(HTTPClientError) {
        try check(curl_multi_poll(raw, nil, 0, Int32(clamping: timeoutMilliseconds), nil), "curl_multi_poll")
    }

    /// The next finished transfer: its easy handle pointer and result, or nil when none is waiting.
    func nextCompletion() -> (easy: UnsafeMutableRawPointer, code: CURLcode)? {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(raw, &remaining) {
            if ccurl_multi_msg_is_done(message) != 0, let easy = message.pointee.easy_handle {
                return (easy, ccurl_multi_msg_result(message))
            }
        }
        return nil
    }

    private func check(_ code: CURLMcode, _ operation: String) throws(HTTPClientError) {
        guard code != CURLM_OK else { return }
        let text = curl_multi_strerror(code).map { String(cString: $0) } ?? "unknown"
        throw HTTPClientError(kind: .other, curlCode: Int(code.rawValue), message: "\(operation): \(text)", url: "")
    }
}

/// Wakes a thread sleeping in `curl_multi_poll` on one multi handle, from any thread.
///
/// `@unchecked Sendable`: libcurl documents `curl_multi_wakeup` as callable from any thread while the
/// handle is alive (curl_multi_wakeup(3): "This function can be called from any thread"). Holders make
/// sure the handle is alive: they stop using the waker, under a lock, before the handle is freed.
struct CurlMultiWaker: @unchecked Sendable {
    fileprivate let raw: UnsafeMutableRawPointer

    /// Interrupts the current or next `curl_multi_poll` on the handle.
    func wakeUp() {
        curl_multi_wakeup(raw)
    }
}
