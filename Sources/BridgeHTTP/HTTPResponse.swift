/// A complete HTTP response: status, headers, body, and how it came (HTTP version, connection reused).
public struct HTTPResponse: Sendable {
    /// The status code of the final response (3xx included: redirects are not followed).
    public var status: Int
    /// Response headers in arrival order, names lower-cased, values trimmed.
    public var headers: [(name: String, value: String)]
    /// The body, at most `HTTPRequest.maxResponseBytes` (or `HTTPClientOptions.maxResponseBytes`) long (see
    /// `bodyTruncated`).
    public var body: [UInt8]
    /// True when the body was longer than the cap and only its first bytes were kept.
    public var bodyTruncated: Bool
    /// The HTTP version used: `1.0`, `1.1`, `2`, or `0` when unknown.
    public var httpVersion: String
    /// Whether this request reused an open connection (curl reported no new connection).
    public var reusedConnection: Bool

    /// Creates a response (the client builds these; tests and doubles may too).
    public init(
        status: Int,
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = [],
        bodyTruncated: Bool = false,
        httpVersion: String = "1.1",
        reusedConnection: Bool = false
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.bodyTruncated = bodyTruncated
        self.httpVersion = httpVersion
        self.reusedConnection = reusedConnection
    }

    /// The first value of header `name` (case-insensitive), if present.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name == wanted }?.value
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The body decoded as UTF-8 (invalid sequences replaced), for logs and error reports.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
