public import BridgeSystem

/// Settings shared by every request of one client: timeouts, TLS trust, limits.
public struct HTTPClientOptions: Sendable {
    /// What to do when a response body is longer than `maxResponseBytes`.
    public enum OversizedBody: Sendable, Equatable {
        /// Keep the first `maxResponseBytes`, stop reading, and mark the response `bodyTruncated`
        /// (webhooks keep the first KiB of an error body).
        case truncate
        /// Fail the request with `HTTPClientError.Kind.tooLarge` (REST calls that need the whole JSON).
        case fail
    }

    /// Time limit for the TCP connect and TLS handshake. Default: 10 s.
    public var connectTimeout: Duration
    /// Whole-request time limit when the request sets none. Default: 30 s.
    public var requestTimeout: Duration
    /// An extra CA bundle (PEM) trusted in addition to the system store. Default: nil.
    public var caFile: String?
    /// Disables certificate and host-name verification. Only for tests and explicit opt-in. Default: false.
    public var insecureSkipVerify: Bool
    /// The `User-Agent` sent unless the request sets one. Default: `directus-bridge`.
    public var userAgent: String
    /// The most body bytes kept in memory per response. Default: 16 MiB.
    public var maxResponseBytes: Int
    /// What happens above `maxResponseBytes`. Default: `.truncate`.
    public var oversizedBody: OversizedBody
    /// The response headers kept in `HTTPResponse.headers` (names, any case); nil keeps all. A sender that reads
    /// one header of thousands of responses a second saves building the others. Default: nil.
    public var keptResponseHeaders: [String]? {
        didSet { keptHeaderNames = Self.lowercasedBytes(keptResponseHeaders) }
    }
    /// The HTTP proxy every request tunnels through (`CONNECT`, for http as for https); nil connects directly. No
    /// proxy comes from the environment. Default: nil.
    public var proxy: HTTPProxy?
    /// `keptResponseHeaders` as lower-case bytes, made once here rather than for every request.
    private(set) var keptHeaderNames: [[UInt8]]?

    /// Creates options; every parameter has the documented default.
    public init(
        connectTimeout: Duration = .seconds(10),
        requestTimeout: Duration = .seconds(30),
        caFile: String? = nil,
        insecureSkipVerify: Bool = false,
        userAgent: String = "directus-bridge",
        maxResponseBytes: Int = 16 << 20,
        oversizedBody: OversizedBody = .truncate,
        keptResponseHeaders: [String]? = nil,
        proxy: HTTPProxy? = nil
    ) {
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.caFile = caFile
        self.insecureSkipVerify = insecureSkipVerify
        self.userAgent = userAgent
        self.maxResponseBytes = maxResponseBytes
        self.oversizedBody = oversizedBody
        self.keptResponseHeaders = keptResponseHeaders
        self.keptHeaderNames = Self.lowercasedBytes(keptResponseHeaders)
        self.proxy = proxy
    }

    private static func lowercasedBytes(_ names: [String]?) -> [[UInt8]]? {
        names.map { $0.map { Array($0.lowercased().utf8) } }
    }
}

extension Duration {
    /// Whole milliseconds, at least 1 for any positive duration (curl treats 0 as "no limit").
    var curlMilliseconds: Int {
        let (seconds, attoseconds) = components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if milliseconds <= 0 { return self > .zero ? 1 : 0 }
        return Int(clamping: milliseconds)
    }
}
