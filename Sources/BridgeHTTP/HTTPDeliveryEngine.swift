public import BridgeSystem
import CCurl
import Synchronization

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Many HTTP requests in flight at once on libcurl multi handles, each driven by a dedicated thread.
///
/// Built for webhook delivery: one loop hands over batches (`submit(_:to:)`, the `DeliveryEngine` interface) and
/// gets the outcomes back in batches through a `DeliveryReceiver`; the drivers run up to `maxInFlight` transfers at
/// a time between them (the rest wait in arrival order), reuse connections and easy handles, and multiplex HTTP/2
/// streams when a TLS server offers h2, without ever blocking on a caller. `cancelAll(of:)` and
/// `cancelWaiting(of:)` abort a receiver's transfers; `shutdown()` aborts everything and frees the handles.
///
/// With `drivers` > 1 the in-flight limit and the connection limits are split between independent drivers, each
/// with its own multi handle, connections and thread, and every request goes to the driver with the fewest
/// outstanding: curl's own work per request (most of the engine's CPU time) then runs on several cores.
public final class HTTPDeliveryEngine: DeliveryEngine, Sendable {
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
        /// Driver threads, each with its own multi handle and connections; at most `maxInFlight` and at most a
        /// connection limit that is set. Default: 1.
        public var drivers: Int

        /// Creates a configuration; every parameter has the documented default.
        public init(
            maxInFlight: Int = 64,
            maxTotalConnections: Int = 0,
            maxHostConnections: Int = 0,
            multiplex: Bool = true,
            maxIdleHandles: Int = 64,
            drivers: Int = 1
        ) {
            self.maxInFlight = maxInFlight
            self.maxTotalConnections = maxTotalConnections
            self.maxHostConnections = maxHostConnections
            self.multiplex = multiplex
            self.maxIdleHandles = maxIdleHandles
            self.drivers = drivers
        }

        /// The drivers actually started: limits are split between them, and none may get a share of zero.
        var effectiveDrivers: Int {
            var count = max(1, min(drivers, maxInFlight))
            if maxTotalConnections > 0 { count = min(count, maxTotalConnections) }
            if maxHostConnections > 0 { count = min(count, maxHostConnections) }
            return count
        }

        /// Driver `index`'s share of the limits.
        func share(_ index: Int) -> Configuration {
            let count = effectiveDrivers
            func part(_ total: Int) -> Int { total == 0 ? 0 : total / count + (index < total % count ? 1 : 0) }
            var share = self
            share.drivers = 1
            share.maxInFlight = part(maxInFlight)
            share.maxTotalConnections = part(maxTotalConnections)
            share.maxHostConnections = part(maxHostConnections)
            share.maxIdleHandles = max(1, part(maxIdleHandles))
            return share
        }
    }

    /// The options every request uses.
    public let options: HTTPClientOptions
    /// The engine-wide limits.
    public let configuration: Configuration
    private let queues: [DeliveryQueue]
    private let nextID = Atomic<UInt64>(1)

    /// Creates the engine and starts its driver threads (with `threadStarter`). Throws `HTTPClientError` when curl
    /// cannot be set up and the `SystemError` of a driver thread that could not be started (every driver started
    /// before it stops again).
    public init(
        options: HTTPClientOptions = HTTPClientOptions(),
        configuration: Configuration = Configuration(),
        logger: Logger = .silent,
        threadStarter: DetachedThread.Starter = DetachedThread.defaultStarter
    ) throws {
        precondition(configuration.maxInFlight > 0, "maxInFlight must be positive")
        self.options = options
        self.configuration = configuration
        var drivers: [(DeliveryDriver, DeliveryQueue)] = []
        for index in 0..<configuration.effectiveDrivers {
            let share = configuration.share(index)
            let multi = try CurlMultiHandle.make()
            try multi.setOption(CURLMOPT_MAX_TOTAL_CONNECTIONS, share.maxTotalConnections)
            try multi.setOption(CURLMOPT_MAX_HOST_CONNECTIONS, share.maxHostConnections)
            try multi.setOption(CURLMOPT_PIPELINING, share.multiplex ? CURLPIPE_MULTIPLEX : 0)
            // curl's default cache holds 4 connections per easy handle *currently added*: whenever fewer transfers
            // ran for a moment, it closed idle keep-alive connections that the next burst had to open again.
            try multi.setOption(CURLMOPT_MAXCONNECTS, max(share.maxInFlight, 4))
            let queue = DeliveryQueue(waker: multi.waker)
            drivers.append((DeliveryDriver(multi: multi, queue: queue, options: options, configuration: share,
                logger: logger), queue))
        }
        queues = drivers.map(\.1)
        // Only once every handle was made: a throw above starts none. A driver that cannot start throws here, and
        // `deinit` stops the ones started before it.
        for (driver, _) in drivers { try driver.start(with: threadStarter) }
    }

    deinit {
        for queue in queues { queue.requestStop() }  // driver threads hold their queue and handles, never `self`
    }

    /// Wake-ups sent to the driver threads so far (tests count them: a driver is woken only when it may have a free
    /// slot, see `DeliveryQueue`).
    var driverWakeUps: Int { queues.reduce(0) { $0 + $1.wakeUps } }

    private static func indexOfLeast(_ load: [Int]) -> Int {
        load.indices.min { load[$0] < load[$1] }!
    }

    /// Queues `requests` in order and returns at once; `receiver` gets each outcome with the request's tag, in
    /// batches from the driver thread. For a caller that keeps many requests in flight from one loop: one
    /// hand-over per batch each way instead of a task per request. `cancelAll(of:)` aborts them.
    public func submit(_ requests: [(tag: Int64, request: HTTPRequest)], to receiver: DeliveryReceiver) {
        let first = nextID.wrappingAdd(UInt64(requests.count), ordering: .relaxed).oldValue
        let jobs = requests.enumerated().map { offset, entry in
            DeliveryJob(id: first + UInt64(offset), request: entry.request, receiver: receiver, tag: entry.tag)
        }
        guard queues.count > 1 else { return queues[0].submit(jobs) }
        // Each job to the driver with the fewest outstanding, counting the ones assigned here.
        var load = queues.map(\.outstanding)
        var shares = Array(repeating: [DeliveryJob](), count: queues.count)
        for job in jobs {
            let index = Self.indexOfLeast(load)
            shares[index].append(job)
            load[index] += 1
        }
        for (queue, share) in zip(queues, shares) { queue.submit(share) }
    }

    /// Aborts every request submitted to `receiver` that has not finished; each is reported `.cancelled`.
    public func cancelAll(of receiver: DeliveryReceiver) {
        for queue in queues { queue.cancel(receiver: receiver, onlyWaiting: false) }
    }

    /// Aborts the requests submitted to `receiver` that still wait for a slot (reported `.cancelled`); those
    /// already sent go on.
    public func cancelWaiting(of receiver: DeliveryReceiver) {
        for queue in queues { queue.cancel(receiver: receiver, onlyWaiting: true) }
    }

    /// Aborts every transfer in flight or waiting (their callers get `.cancelled`), stops the driver threads,
    /// frees every curl handle, and returns once that is done. Later submissions are answered `.cancelled`.
    public func shutdown() async {
        for queue in queues { await queue.stopAndWait() }
    }
}
