import CCurl

// MARK: - Options for one request: TLS trust, method and body

extension CurlEasyHandle {
    /// Certificate verification: on unless `insecureSkipVerify`; the extra CA file beside the system store.
    func setTLS(_ options: HTTPClientOptions, _ setter: inout OptionSetter) {
        if options.insecureSkipVerify {
            setter.set(CURLOPT_SSL_VERIFYPEER, 0)
            setter.set(CURLOPT_SSL_VERIFYHOST, 0)
            return
        }
        setter.set(CURLOPT_SSL_VERIFYPEER, 1)
        setter.set(CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile = options.caFile, !caFile.isEmpty {
            // CAINFO replaces the built-in bundle; the built-in directory (CAPATH) stays, so the system
            // store is still trusted in addition to the extra CA file.
            setter.set(CURLOPT_CAINFO, string: caFile)
            if let systemPath = CurlGlobal.defaultCAPath { setter.set(CURLOPT_CAPATH, string: systemPath) }
        }
    }

    /// The method and, when there is one, a copy of the body.
    func setMethodAndBody(_ request: HTTPRequest, _ setter: inout OptionSetter) {
        let method = request.method.uppercased()
        switch (method, request.body) {
        case ("GET", nil):
            setter.set(CURLOPT_HTTPGET, 1)
        case ("HEAD", _):
            setter.set(CURLOPT_NOBODY, 1)
        case (_, let body?):
            copyBody(body, &setter)
            if method != "POST" { setter.set(CURLOPT_CUSTOMREQUEST, string: method) }
        case ("POST", nil):
            copyBody([], &setter)
        default:
            setter.set(CURLOPT_CUSTOMREQUEST, string: method)
        }
    }

    /// Hands curl a copy of `body` (COPYPOSTFIELDS copies at once, so the pointer need not outlive the call).
    func copyBody(_ body: [UInt8], _ setter: inout OptionSetter) {
        // The size first: COPYPOSTFIELDS then copies exactly that many bytes (the body may contain NUL).
        setter.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: curl_off_t(body.count))
        var empty: UInt8 = 0  // COPYPOSTFIELDS rejects NULL, which an empty array's buffer may be
        body.withUnsafeBytes { bytes in
            if let start = bytes.baseAddress {
                setter.set(CURLOPT_COPYPOSTFIELDS, pointer: UnsafeMutableRawPointer(mutating: start))
            } else {
                withUnsafeMutableBytes(of: &empty) { setter.set(CURLOPT_COPYPOSTFIELDS, pointer: $0.baseAddress) }
            }
        }
    }
}
