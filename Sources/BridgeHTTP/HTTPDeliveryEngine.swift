public import BridgeSystem
import CCurl
import Synchronization

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Many HTTP requests in flight at once on one libcurl multi handle, driven by one dedicated thread.
///
/// Built for webhook delivery: any number of tasks call `send(_:)` concurrently; the driver runs up to
/// `maxInFlight` transfers at a time (the rest wait in arrival order), reuses connections and easy handles,
/// multiplexes HTTP/2 streams when a TLS server offers h2, and resumes each caller without blocking itself.
/// Cancelling a caller aborts its transfer; `shutdown()` aborts everything and frees the handles.
public final class HTTPDeliveryEngine: HTTPTransport, Sendable {
    /// Engine-wide limits (request-level settings are in `HTTPClientOptions`).
    public struct Configuration: Sendable {
        /// Transfers running at once; later requests wait their turn. Default: 64.
        public var maxInFlight: Int
        /// CURLMOPT_MAX_TOTAL_CONNECTIONS: open connections at most, 0 = no limit (transfers beyond wait
        /// inside curl). Default: 0.
        public var maxTotalConnections: Int
        /// CURLMOPT_MAX_HOST_CONNECTIONS: connections per host at most, 0 = no limit. Default: 0.
        public var maxHostConnections: Int
        /// Multiplex requests as HTTP/2 streams on one connection when the server speaks h2. Default: true.
        public var multiplex: Bool
        /// Easy handles kept for reuse when idle. Default: 64.
        public var maxIdleHandles: Int

        /// Creates a configuration; every parameter has the documented default.
        public init(
            maxInFlight: Int = 64,
            maxTotalConnections: Int = 0,
            maxHostConnections: Int = 0,
            multiplex: Bool = true,
            maxIdleHandles: Int = 64
        ) {
            self.maxInFlight = maxInFlight
            self.maxTotalConnections = maxTotalConnections
            self.maxHostConnections = maxHostConnections
            self.multiplex = multiplex
            self.maxIdleHandles = maxIdleHandles
        }
    }

    /// The options every request uses.
    public let options: HTTPClientOptions
    /// The engine-wide limits.
    public let configuration: Configuration
    private let queue: DeliveryQueue
    private let nextID = Atomic<UInt64>(1)

    /// Creates the engine and starts its driver thread.
    public init(
        options: HTTPClientOptions = HTTPClientOptions(),
        configuration: Configuration = Configuration(),
        logger: Logger = .silent
    ) throws {
        precondition(configuration.maxInFlight > 0, "maxInFlight must be positive")
        self.options = options
        self.configuration = configuration
        let multi = try CurlMultiHandle.make()
        try multi.setOption(CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxTotalConnections)
        try multi.setOption(CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxHostConnections)
        try multi.setOption(CURLMOPT_PIPELINING, configuration.multiplex ? CURLPIPE_MULTIPLEX : 0)
        let queue = DeliveryQueue(waker: multi.waker)
        self.queue = queue
        let driver = DeliveryDriver(multi: multi, queue: queue, options: options, configuration: configuration,
            logger: logger)
        driver.start()
    }

    deinit {
        queue.requestStop()  // the driver thread holds only the queue and its own handles, never `self`
    }

    /// Sends `request` once the engine has room and returns the final response (redirects are not followed).
    /// Throws `HTTPClientError` (`.cancelled` when the caller is cancelled or the engine shuts down).
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                queue.submit(DeliveryJob(id: id, request: request, continuation: continuation))
            }
        } onCancel: {
            queue.cancel(id)
        }
    }

    /// Aborts every transfer in flight or waiting (their callers get `.cancelled`), stops the driver thread,
    /// frees every curl handle, and returns once that is done. Later `send` calls fail with `.cancelled`.
    public func shutdown() async {
        await queue.stopAndWait()
    }
}
