import BridgeSystem
import CCurl

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Owner of one libcurl easy handle (`CURL *`) and of everything curl points at during a transfer:
/// the error buffer, the request header list, and the response being collected.
///
/// One transfer at a time, confined to the thread that runs it (libcurl: an easy handle must not be used
/// from two threads at once). Reused across requests so its connections, DNS and TLS session caches are
/// reused too; `prepare` resets the options before every request.
final class CurlEasyHandle {
    /// The C handle, freed in deinit.
    let raw: UnsafeMutableRawPointer
    /// curl writes a detailed message here when a call fails (CURLOPT_ERRORBUFFER needs CURL_ERROR_SIZE bytes
    /// that live as long as the handle).
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The body and header lines of the current transfer; curl reads them until the transfer ends.
    private let requestBuffers = CurlRequestBuffers()
    /// What the options set now were set for; a request of the same shape only changes its own options.
    private var preparedShape: RequestShape?

    // MARK: - State of the current transfer (written by the callbacks)
    /// Identifies the transfer to whoever drives it (the delivery engine's job number).
    var transferID: UInt64 = 0
    /// The request URL, for error messages.
    private(set) var url = ""
    /// The proxy of the current transfer, for error messages.
    private var proxy: HTTPProxy?
    private var responseHeaders: [(name: String, value: String)] = []
    private var body: [UInt8] = []
    private var bodyLimit = 0
    private var bodyTruncated = false
    /// The request's body check for this transfer, and why it refused the body.
    private var bodyCheck: (any ResponseBodyCheck)?
    private var bodyRefusal: String?
    private var headerBytes = 0
    private var headersTooLarge = false
    private var oversizedBody = HTTPClientOptions.OversizedBody.truncate
    /// `keptResponseHeaders` as lower-case bytes (nil: keep all).
    private var keptHeaderNames: [[UInt8]]?
    /// Read by the progress callback; nil disables progress callbacks.
    private(set) var cancellation: CancellationFlag?

    /// Response headers beyond this many bytes fail the request (curl limits single lines, not their number).
    static let maxHeaderBytes = 256 * 1024

    private init(raw: UnsafeMutableRawPointer) {
        self.raw = raw
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        self.errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    /// Makes an easy handle.
    static func make() throws(HTTPClientError) -> CurlEasyHandle {
        try CurlGlobal.ensureInitialized()
        guard let raw = curl_easy_init() else {
            throw HTTPClientError(kind: .other, message: "curl_easy_init failed", url: "")
        }
        return CurlEasyHandle(raw: raw)
    }

    deinit {
        curl_easy_cleanup(raw)  // first: curl may still reference the buffers below until cleanup
        errorBuffer.deallocate()
    }

    // MARK: - Preparing a transfer

    /// Sets every option for `request`. `cancellation`, when given, is polled by the progress callback and aborts
    /// the transfer once set. `waitForMultiplexing` makes an HTTPS transfer wait for a connection still being set
    /// up, in case it turns out to speak HTTP/2 (CURLOPT_PIPEWAIT).
    ///
    /// When the previous request had the same shape (URL, method, options; `RequestShape`) only the body, headers
    /// and time limit are set again — a webhook engine sends thousands of such requests a second, and resetting
    /// the handle and setting two dozen options for each cost more than the request. Otherwise the handle is
    /// reset first (`curl_easy_reset` keeps live connections and the DNS and TLS session caches).
    func prepare(
        _ request: HTTPRequest,
        options: HTTPClientOptions,
        cancellation: CancellationFlag?,
        waitForMultiplexing: Bool = false
    ) throws(HTTPClientError) {
        url = request.url
        proxy = options.proxy
        // A line break in a header would end it and start one the value chose (a token a server issued, a value
        // nothing refused before): such a request is never sent. Names are shown, values never (they are secrets).
        if let broken = request.headers.first(where: { OneLine.isBroken($0.name) || OneLine.isBroken($0.value) }) {
            let name = PeerText.sanitized(broken.name, maximumLength: 64)
            throw HTTPClientError(
                kind: .other, message: "header \(name) holds a line break or NUL; the request was not sent", url: url)
        }
        responseHeaders.removeAll(keepingCapacity: true)
        body = []
        bodyLimit = max(0, request.maxResponseBytes ?? options.maxResponseBytes)
        bodyTruncated = false
        bodyCheck = request.makeBodyCheck?()
        bodyRefusal = nil
        headerBytes = 0
        headersTooLarge = false
        oversizedBody = options.oversizedBody
        keptHeaderNames = options.keptHeaderNames
        self.cancellation = cancellation
        errorBuffer[0] = 0

        let shape = RequestShape(request, options, cancellable: cancellation != nil, pipeWait: waitForMultiplexing)
        var setter = OptionSetter(handle: raw)
        if shape != preparedShape {
            preparedShape = nil
            curl_easy_reset(raw)
            setShapeOptions(shape, options, &setter)
        }
        setter.set(CURLOPT_TIMEOUT_MS, (request.timeout ?? options.requestTimeout).curlMilliseconds)
        if shape.sendsBody {
            let bytes = request.body ?? []
            // The size first: without it curl would take the body for a C string.
            setter.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: curl_off_t(bytes.count))
            setter.set(CURLOPT_POSTFIELDS, pointer: requestBuffers.setBody(bytes))
        }
        setHeaders(request, shape, &setter)
        if let failure = setter.failure {
            preparedShape = nil
            throw HTTPClientError(kind: .other, curlCode: Int(failure.code.rawValue), message: failure.text, url: url)
        }
        preparedShape = shape
    }

    /// The options a request shape decides, set once per run of requests of that shape.
    private func setShapeOptions(_ shape: RequestShape, _ options: HTTPClientOptions, _ setter: inout OptionSetter) {
        setter.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        setter.set(CURLOPT_URL, string: shape.url)
        setter.set(CURLOPT_PROTOCOLS_STR, string: "http,https")
        setter.set(CURLOPT_NOSIGNAL, 1)  // no SIGALRM for DNS timeouts: signals and threads do not mix
        setter.set(CURLOPT_FOLLOWLOCATION, 0)  // a 3xx is a final answer (webhooks treat it as one)
        setter.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))  // h2 over TLS when ALPN offers it
        // Only for https: over plain http curl 7.88 can leave a transfer parked behind a connection whose
        // response never ends (seen with a hanging peer), and h2 is only negotiated over TLS anyway.
        if shape.pipeWait && shape.url.lowercased().hasPrefix("https:") {
            setter.set(CURLOPT_PIPEWAIT, 1)
        }
        setProxy(shape.proxy, &setter)
        setter.set(CURLOPT_TCP_NODELAY, 1)
        setter.set(CURLOPT_TCP_KEEPALIVE, 1)
        setter.set(CURLOPT_CONNECTTIMEOUT_MS, options.connectTimeout.curlMilliseconds)
        setTLS(options, &setter)
        setMethod(shape, &setter)
        setter.set(CURLOPT_USERAGENT, string: options.userAgent)  // a User-Agent header of the request wins
        setCallbacks(&setter)
    }

    private func setHeaders(_ request: HTTPRequest, _ shape: RequestShape, _ setter: inout OptionSetter) {
        // "Expect:" removes curl's "Expect: 100-continue", which would wait up to a second before sending a large
        // body; no libcurl adds it to a body of 1 KiB or less, so a small one goes without the line (curl compares
        // each header line with a dozen names for every request). "Content-Type:" removes curl's form-urlencoded
        // default for bodies.
        let expect = shape.sendsBody && (request.body?.count ?? 0) > Self.largestBodyWithoutExpect
        let extra: [StaticString]
        if shape.sendsBody && !request.headers.contains(where: { Self.isContentType($0.name) }) {
            extra = expect ? Self.noExpectNoContentType : Self.noContentType
        } else {
            extra = expect ? Self.noExpect : []
        }
        let list = requestBuffers.setHeaders(request.headers, extra: extra)
        setter.set(CURLOPT_HTTPHEADER, pointer: UnsafeMutableRawPointer(list))
    }

    /// The largest body every libcurl sends without `Expect: 100-continue`: 7.88 asks for bodies over 1 MiB only,
    /// older versions for bodies over 1 KiB. `DeliveryEngineTests` pins both sides against the libcurl in use.
    static let largestBodyWithoutExpect = 1024
    private static let noExpect: [StaticString] = ["Expect:"]
    private static let noContentType: [StaticString] = ["Content-Type:"]
    private static let noExpectNoContentType: [StaticString] = ["Expect:", "Content-Type:"]

    private static func isContentType(_ name: String) -> Bool {
        name.utf8.count == 12 && HTTPHeaderLine.equalsIgnoringASCIICase(name.utf8, contentType)
    }

    private static let contentType = Array("content-type".utf8)

    private func setCallbacks(_ setter: inout OptionSetter) {
        // Unretained: curl calls back only while this handle runs a transfer, and whoever runs it holds a
        // strong reference to this object for the whole transfer. curl_easy_reset clears these, so they are
        // set again for every transfer.
        let context = Unmanaged.passUnretained(self).toOpaque()
        setter.set(CURLOPT_PRIVATE, pointer: context)
        setter.set(CURLOPT_WRITEDATA, pointer: context)
        setter.set(CURLOPT_WRITEFUNCTION, callback: CurlEasyHandle.writeCallback)
        setter.set(CURLOPT_HEADERDATA, pointer: context)
        setter.set(CURLOPT_HEADERFUNCTION, callback: CurlEasyHandle.headerCallback)
        if cancellation != nil {
            setter.set(CURLOPT_XFERINFODATA, pointer: context)
            setter.setProgress(CurlEasyHandle.progressCallback)
            setter.set(CURLOPT_NOPROGRESS, 0)
        }
    }

    /// The object whose pointer was set as CURLOPT_PRIVATE (the delivery engine maps finished handles back).
    static func fromPrivate(_ easy: UnsafeMutableRawPointer) -> CurlEasyHandle? {
        var pointer: UnsafeMutableRawPointer?
        guard ccurl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer) == CURLE_OK, let pointer else { return nil }
        return Unmanaged<CurlEasyHandle>.fromOpaque(pointer).takeUnretainedValue()
    }

    // MARK: - Callbacks (called by curl on the thread running the transfer)

    /// Passes body bytes through the request's check, then appends them up to the limit; past it keeps the prefix and
    /// stops the transfer.
    func receivedBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if bodyCheck != nil, let refusal = bodyCheck!.inspect(bytes) {
            bodyRefusal = refusal
            return 0  // curl stops with CURLE_WRITE_ERROR; `finish` reports the refusal
        }
        let room = bodyLimit - body.count
        if bytes.count <= room {
            body.append(contentsOf: bytes)
            return bytes.count
        }
        body.append(contentsOf: bytes.prefix(room))
        bodyTruncated = true
        return 0  // makes curl stop with CURLE_WRITE_ERROR; `finish` turns that into a truncated response
    }

    /// Parses one header line; a status line starts a new response (after `100 Continue` or a 1xx).
    func receivedHeaderLine(_ line: UnsafeRawBufferPointer) -> Int {
        headerBytes += line.count
        if headerBytes > Self.maxHeaderBytes {
            headersTooLarge = true
            return 0
        }
        if Self.isStatusLine(line) {
            responseHeaders.removeAll(keepingCapacity: true)
        } else if keptHeaderNames.map({ HTTPHeaderLine.line(line, namesOneOf: $0) }) ?? true,
            let header = HTTPHeaderLine.parse(line)
        {
            responseHeaders.append(header)
        }
        return line.count
    }

    /// Whether `line` starts a response (`HTTP/…`), compared byte by byte: the generic `starts(with:)` over the buffer
    /// was not specialised and cost more than the rest of the callback.
    private static func isStatusLine(_ line: UnsafeRawBufferPointer) -> Bool {
        line.count >= 5 && line[0] == UInt8(ascii: "H") && line[1] == UInt8(ascii: "T") && line[2] == UInt8(ascii: "T")
            && line[3] == UInt8(ascii: "P") && line[4] == UInt8(ascii: "/")
    }

    /// Whether the transfer should be aborted (progress callback).
    var shouldAbort: Bool { cancellation?.isCancelled ?? false }

    // MARK: - Finishing a transfer

    /// Turns the transfer's outcome into a response or an error and releases the response buffers.
    func finish(code: CURLcode) -> Result<HTTPResponse, HTTPClientError> {
        defer {
            cancellation = nil
            bodyCheck = nil
            body = []
        }
        if headersTooLarge {
            return .failure(HTTPClientError(kind: .tooLarge, curlCode: Int(code.rawValue),
                message: "response headers exceed \(Self.maxHeaderBytes) bytes", url: url))
        }
        if let bodyRefusal, code == CURLE_WRITE_ERROR {
            return .failure(HTTPClientError(kind: .tooLarge, curlCode: Int(code.rawValue),
                message: "response body refused: \(bodyRefusal)", url: url))
        }
        if bodyTruncated && code == CURLE_WRITE_ERROR {
            guard oversizedBody == .truncate else {
                return .failure(HTTPClientError(kind: .tooLarge, curlCode: Int(code.rawValue),
                    message: "response body exceeds \(bodyLimit) bytes", url: url))
            }
        } else if code != CURLE_OK {
            return .failure(makeError(code: code))
        }
        return .success(makeResponse())
    }

    /// The error for a failed transfer, with curl's detailed message when it wrote one.
    func makeError(code: CURLcode) -> HTTPClientError {
        let detail = String(cString: errorBuffer)
        let generic = curl_easy_strerror(code).map { String(cString: $0) } ?? "curl error"
        var message = detail.isEmpty ? generic : detail
        if let proxy { message += " (through proxy \(proxy))" }  // curl's text may name the proxy's address only
        return HTTPClientError(kind: HTTPClientError.Kind(code), curlCode: Int(code.rawValue), message: message, url: url)
    }

    private func makeResponse() -> HTTPResponse {
        var status = 0
        _ = ccurl_easy_getinfo_long(raw, CURLINFO_RESPONSE_CODE, &status)
        var version = 0
        _ = ccurl_easy_getinfo_long(raw, CURLINFO_HTTP_VERSION, &version)
        var connects = 0
        _ = ccurl_easy_getinfo_long(raw, CURLINFO_NUM_CONNECTS, &connects)
        var response = HTTPResponse(status: status)
        swap(&response.headers, &responseHeaders)
        swap(&response.body, &body)
        response.bodyTruncated = bodyTruncated
        response.httpVersion = Self.versionText(version)
        response.reusedConnection = connects == 0
        return response
    }

    private static func versionText(_ version: Int) -> String {
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): "1.0"
        case Int(CURL_HTTP_VERSION_1_1): "1.1"
        case Int(CURL_HTTP_VERSION_2_0): "2"
        case Int(CURL_HTTP_VERSION_3): "3"
        default: "0"
        }
    }
}

@available(*, unavailable)
extension CurlEasyHandle: Sendable {}
