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
        // curl's default cache holds 4 connections per easy handle *currently added*: whenever fewer transfers
        // ran for a moment, it closed idle keep-alive connections that the next burst had to open again.
        try multi.setOption(CURLMOPT_MAXCONNECTS, max(configuration.maxInFlight, 4))
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
                queue.submit([DeliveryJob(id: id, request: request, reply: .task(continuation))])
            }
        } onCancel: {
            queue.cancel(id)
        }
    }

    /// Queues `requests` in order and returns at once; `receiver` gets each outcome with the request's tag, in
    /// batches from the driver thread. For a caller that keeps many requests in flight from one loop: one
    /// hand-over per batch each way instead of a task per request. `cancelAll(of:)` aborts them.
    public func submit(_ requests: [(tag: Int64, request: HTTPRequest)], to receiver: DeliveryReceiver) {
        let first = nextID.wrappingAdd(UInt64(requests.count), ordering: .relaxed).oldValue
        queue.submit(requests.enumerated().map { offset, entry in
            DeliveryJob(id: first + UInt64(offset), request: entry.request, reply: .receiver(receiver, tag: entry.tag))
        })
    }

    /// Aborts every request submitted to `receiver` that has not finished; each is reported `.cancelled`.
    public func cancelAll(of receiver: DeliveryReceiver) {
        queue.cancel(receiver: receiver, onlyWaiting: false)
    }

    /// Aborts the requests submitted to `receiver` that still wait for a slot (reported `.cancelled`); those
    /// already sent go on.
    public func cancelWaiting(of receiver: DeliveryReceiver) {
        queue.cancel(receiver: receiver, onlyWaiting: true)
    }

    /// Aborts every transfer in flight or waiting (their callers get `.cancelled`), stops the driver thread,
    /// frees every curl handle, and returns once that is done. Later `send` calls fail with `.cancelled`.
    public func shutdown() async {
        await queue.stopAndWait()
    }
}
