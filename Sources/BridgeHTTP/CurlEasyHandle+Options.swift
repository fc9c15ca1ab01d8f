import BridgeSystem
import CCurl

// MARK: - Options for one request: TLS trust, method and body

extension CurlEasyHandle {
    /// Certificate verification: on unless `insecureSkipVerify`; the extra CA file beside the system store.
    func setTLS(_ options: HTTPClientOptions, _ setter: inout OptionSetter) {
        // TLS 1.2 at least, like the WebSocket client (BridgeTLS.TLSContext), whatever the system's OpenSSL
        // configuration would allow (docs/RELIABILITY.md, "Files and transport").
        setter.set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
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

    /// The proxy: `options.proxy` with a tunnel (`CONNECT`) for every request, http as https, as the WebSocket client
    /// opens one; or none at all. Never one from `http_proxy`, `HTTPS_PROXY`, `ALL_PROXY` or `NO_PROXY`: a proxy the
    /// operator never chose would see the token and every webhook body (docs/configuration.md "Proxies").
    func setProxy(_ proxy: HTTPProxy?, _ setter: inout OptionSetter) {
        guard let proxy else {
            setter.set(CURLOPT_PROXY, string: "")  // an empty string is libcurl's way to ignore the environment
            return
        }
        setter.set(CURLOPT_PROXY, string: proxy.description)
        setter.set(CURLOPT_PROXYTYPE, Int(CURLPROXY_HTTP.rawValue))
        setter.set(CURLOPT_HTTPPROXYTUNNEL, 1)
        setter.set(CURLOPT_NOPROXY, string: "")  // "" applies the proxy to every host, whatever NO_PROXY says
        if let user = proxy.user {  // Basic, libcurl's default proxy authentication
            setter.set(CURLOPT_PROXYUSERNAME, string: user)
            setter.set(CURLOPT_PROXYPASSWORD, string: proxy.password ?? "")
        }
    }

    /// The method (the body itself is set per request, see `prepare`).
    func setMethod(_ shape: RequestShape, _ setter: inout OptionSetter) {
        if shape.method == "GET" && !shape.sendsBody {
            setter.set(CURLOPT_HTTPGET, 1)
        } else if shape.method == "HEAD" {
            setter.set(CURLOPT_NOBODY, 1)
        } else if shape.method != "POST" {
            setter.set(CURLOPT_CUSTOMREQUEST, string: shape.method)  // with or without a body
        }
    }
}

/// What decides the options of an easy handle other than the body, the headers and the time limit: two requests
/// of the same shape can share every other option.
struct RequestShape: Equatable {
    var url: String
    /// Upper case.
    var method: String
    /// The request sends a body: it has one, or it is a POST (an empty one then). Never for HEAD.
    var sendsBody: Bool
    var connectTimeout: Duration
    var caFile: String?
    var insecureSkipVerify: Bool
    var userAgent: String
    var proxy: HTTPProxy?
    var cancellable: Bool
    var pipeWait: Bool

    init(_ request: HTTPRequest, _ options: HTTPClientOptions, cancellable: Bool, pipeWait: Bool) {
        url = request.url
        method = Self.upperCased(request.method)
        sendsBody = method != "HEAD" && (request.body != nil || method == "POST")
        connectTimeout = options.connectTimeout
        caFile = options.caFile
        insecureSkipVerify = options.insecureSkipVerify
        userAgent = options.userAgent
        proxy = options.proxy
        self.cancellable = cancellable
        self.pipeWait = pipeWait
    }

    /// `method` in upper case: itself when it is already (as every caller writes it), since `uppercased()` built a
    /// new string for every request.
    private static func upperCased(_ method: String) -> String {
        method.utf8.contains { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") } ? method.uppercased() : method
    }
}
