internal import COpenSSL

/// OpenSSL's per-thread error queue. Drain it on the thread of the failing call, right after the call.
enum OpenSSLErrorQueue {
    /// Empties the queue before a call, so that `SSL_get_error` and the stack only see this call's errors.
    static func clear() {
        ERR_clear_error()
    }

    /// Removes and renders every queued error, oldest first.
    static func drain() -> [String] {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let length = buffer.firstIndex(of: 0) ?? buffer.count
            messages.append(String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages
    }

    /// The reason text for an `X509_V_ERR_*` code.
    static func verifyReason(_ code: Int) -> String {
        guard let text = X509_verify_cert_error_string(code) else { return "verify error \(code)" }
        return String(cString: text)
    }
}
