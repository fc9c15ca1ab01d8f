/// One HTTP request: what to send, where, and how long it may take.
///
/// A value type so it can be retried unchanged (webhook retries send a byte-identical body) and passed
/// between tasks. Redirects are never followed: a 3xx is returned as the final response.
public struct HTTPRequest: Sendable {
    /// The method, upper case (`GET`, `POST`, `PATCH`, …).
    public var method: String
    /// The absolute `http://` or `https://` URL, query included.
    public var url: String
    /// Request headers in order. Names are sent as given; a value may not contain CR or LF.
    public var headers: [(name: String, value: String)]
    /// The body, or nil for none. An empty array sends `Content-Length: 0`.
    public var body: [UInt8]?
    /// The whole-request time limit; nil uses `HTTPClientOptions.requestTimeout`.
    public var timeout: Duration?
    /// The most response body bytes kept for this request; nil uses `HTTPClientOptions.maxResponseBytes`. A
    /// caller that splits its reads by answer size asks for one oversized item with a higher cap.
    public var maxResponseBytes: Int?
    /// Makes the check each attempt's response body goes through as it arrives (nil: none). A refused body ends the
    /// transfer at once with `HTTPClientError.Kind.tooLarge`.
    public var makeBodyCheck: (@Sendable () -> any ResponseBodyCheck)?

    /// Creates a request.
    public init(
        method: String = "GET",
        url: String,
        headers: [(name: String, value: String)] = [],
        body: [UInt8]? = nil,
        timeout: Duration? = nil,
        maxResponseBytes: Int? = nil,
        makeBodyCheck: (@Sendable () -> any ResponseBodyCheck)? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
        self.makeBodyCheck = makeBodyCheck
    }

    /// The first value of header `name` (case-insensitive), if set.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }
}
