import CCurl

// MARK: - C callbacks
// Each receives the handle's own pointer as user data (set unretained in `setCallbacks`, see the rule there).

extension CurlEasyHandle {
    /// CURLOPT_WRITEFUNCTION: body bytes.
    static let writeCallback: ccurl_data_callback = { data, size, count, context in
        let handle = Unmanaged<CurlEasyHandle>.fromOpaque(context!).takeUnretainedValue()
        return handle.receivedBody(UnsafeRawBufferPointer(start: data, count: size * count))
    }

    /// CURLOPT_HEADERFUNCTION: one complete header line at a time, CRLF included.
    static let headerCallback: ccurl_data_callback = { data, size, count, context in
        let handle = Unmanaged<CurlEasyHandle>.fromOpaque(context!).takeUnretainedValue()
        return handle.receivedHeaderLine(UnsafeRawBufferPointer(start: data, count: size * count))
    }

    /// CURLOPT_XFERINFOFUNCTION: non-zero aborts the transfer with CURLE_ABORTED_BY_CALLBACK.
    static let progressCallback: ccurl_xferinfo_callback = { context, _, _, _, _ in
        let handle = Unmanaged<CurlEasyHandle>.fromOpaque(context!).takeUnretainedValue()
        return handle.shouldAbort ? 1 : 0
    }
}

// MARK: - Typed option setting

/// Sets options on one easy handle through the typed shims, remembering the first failure so a whole
/// configuration can be written straight through and checked once.
struct OptionSetter {
    /// The easy handle being configured.
    let handle: UnsafeMutableRawPointer
    /// The first option curl rejected.
    private(set) var failure: (code: CURLcode, text: String)?

    /// Starts configuring `handle`.
    init(handle: UnsafeMutableRawPointer) {
        self.handle = handle
    }

    /// Sets a `long` option.
    mutating func set(_ option: CURLoption, _ value: Int) {
        record(ccurl_easy_setopt_long(handle, option, value), option)
    }

    /// Sets a `curl_off_t` option.
    mutating func set(_ option: CURLoption, offset value: curl_off_t) {
        record(ccurl_easy_setopt_off_t(handle, option, value), option)
    }

    /// Sets a string option; curl copies strings (COPYPOSTFIELDS takes `pointer:` instead).
    mutating func set(_ option: CURLoption, string value: String) {
        record(ccurl_easy_setopt_string(handle, option, value), option)
    }

    /// Sets a pointer option; the pointee must outlive its use by curl unless curl copies it.
    mutating func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) {
        record(ccurl_easy_setopt_pointer(handle, option, value), option)
    }

    /// Sets a write or header callback.
    mutating func set(_ option: CURLoption, callback: ccurl_data_callback) {
        record(ccurl_easy_setopt_data_callback(handle, option, callback), option)
    }

    /// Sets the progress (XFERINFO) callback.
    mutating func setProgress(_ callback: ccurl_xferinfo_callback) {
        record(ccurl_easy_setopt_xferinfo_callback(handle, callback), CURLOPT_XFERINFOFUNCTION)
    }

    private mutating func record(_ code: CURLcode, _ option: CURLoption) {
        guard code != CURLE_OK, failure == nil else { return }
        let text = curl_easy_strerror(code).map { String(cString: $0) } ?? "curl error"
        failure = (code, "curl_easy_setopt(\(option.rawValue)): \(text)")
    }
}
