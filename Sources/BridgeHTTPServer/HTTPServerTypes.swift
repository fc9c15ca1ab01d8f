/// One request as a route handler sees it: the method and the path (without the query string).
public struct HTTPServerRequest: Sendable, Equatable {
    /// The method as sent (`GET`, `HEAD`, …).
    public var method: String
    /// The request path without query string, e.g. `/metrics`.
    public var path: String

    /// Creates a request.
    public init(method: String, path: String) {
        self.method = method
        self.path = path
    }
}

/// What a route handler answers: status, content type and body (copied into the server's buffers).
public struct HTTPServerResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// The `Content-Type` header.
    public var contentType: String
    /// The body bytes (not sent for `HEAD`; `Content-Length` still says how long it would be).
    public var body: [UInt8]
    /// Extra response headers.
    public var headers: [(name: String, value: String)]

    /// Creates a response.
    public init(
        status: Int,
        contentType: String = "text/plain; charset=utf-8",
        body: [UInt8] = [],
        headers: [(name: String, value: String)] = []
    ) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    /// A response with a UTF-8 text body.
    public init(status: Int, contentType: String = "text/plain; charset=utf-8", text: String) {
        self.init(status: status, contentType: contentType, body: Array(text.utf8))
    }
}

/// Answers a request. Runs on one of the server's own threads, so it must be quick and must not block on the
/// cooperative pool; it may be called from several threads at once.
public typealias HTTPRouteHandler = @Sendable (HTTPServerRequest) -> HTTPServerResponse

/// Limits that keep slow, malformed or greedy clients from hurting the server.
public struct HTTPServerOptions: Sendable, Equatable {
    /// An idle connection (no bytes received or sent) is closed after this long; this is what ends a slowloris
    /// client that trickles a request. Whole seconds; at least 1 s. Default: 10 s.
    public var connectionTimeout: Duration
    /// At most this many connections at once; more wait in the kernel's backlog. Default: 64.
    public var connectionLimit: Int
    /// At most this many connections from one client address; more are closed right after `accept`. Without it one
    /// client trickling headers (each byte restarts the idle timeout) could hold every connection for as long as it
    /// liked, keeping scrapers and the orchestrator's `/healthz` probe out. Default: a quarter of `connectionLimit`.
    public var perClientLimit: Int
    /// Polling threads (1 = one thread serves every connection; handlers are expected to be quick). Default: 1.
    public var threads: Int
    /// Per-connection buffer for the request line and headers; a request whose headers do not fit gets
    /// 431 (or 414 for a long URL) and is closed. Default: 32 KiB.
    public var memoryLimit: Int

    /// Creates options with the defaults above.
    public init(
        connectionTimeout: Duration = .seconds(10),
        connectionLimit: Int = 64,
        perClientLimit: Int? = nil,
        threads: Int = 1,
        memoryLimit: Int = 32 * 1024
    ) {
        self.connectionTimeout = connectionTimeout
        self.connectionLimit = connectionLimit
        self.perClientLimit = perClientLimit ?? max(1, connectionLimit / 4)
        self.threads = threads
        self.memoryLimit = memoryLimit
    }
}

/// The server could not start.
public struct HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The address that was asked for (`127.0.0.1:9464`, `[::1]:0`, `localhost:9464`).
    public var address: String
    /// Why: the resolver's or the socket's error text.
    public var reason: String
    /// Whether trying again later may work (address in use, resolver temporarily failing).
    public var isRetriable: Bool

    /// Creates an error.
    public init(address: String, reason: String, isRetriable: Bool) {
        self.address = address
        self.reason = reason
        self.isRetriable = isRetriable
    }

    public var description: String { "cannot listen on \(address): \(reason)" }
}
