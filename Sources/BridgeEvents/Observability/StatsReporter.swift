public import BridgeSystem
internal import Synchronization

/// The periodic `stats` log line at info level (`log.stats_interval`, default every minute): events per second
/// and end-to-end lag p50/p99 over the last interval, and the current depths of the queue and of whatever other
/// components register (the webhook outbox and dead letters: `addGauge("outbox.depth") { … }`).
///
/// Events and lag come from the end-to-end lag histogram, which gets one observation per emitted event; the
/// window is the difference between two snapshots, so a quiet minute after a busy hour reads as quiet.
public final class StatsReporter: Sendable {
    /// Metadata keys of the stats line.
    public enum Key {
        /// Events accepted by every sink during the interval.
        public static let events = "events.count"
        /// Those events per second.
        public static let eventsPerSecond = "events.per_second"
        /// Median end-to-end lag over the interval (bucket upper bound, seconds; an infinity above the last bucket),
        /// left out without events.
        public static let lagP50 = "lag.p50"
        /// 99th percentile end-to-end lag over the interval, like `lagP50`.
        public static let lagP99 = "lag.p99"
        /// Events waiting between Directus and the sinks.
        public static let queueDepth = "queue.depth"
        /// Webhook deliveries waiting in the outbox (registered by the webhook sink).
        public static let outboxDepth = "outbox.depth"
        /// Dead-lettered webhook deliveries (registered by the webhook sink).
        public static let deadLetterDepth = "dlq.depth"
    }

    private struct Window {
        package var previous: Histogram.Snapshot
        package var previousTime: ContinuousClock.Instant
    }

    /// How often the line is logged; zero means never.
    public let interval: Duration
    private let lag: Histogram
    private let logger: Logger
    private let gauges = Mutex<[(key: String, read: @Sendable () -> Double)]>([])
    private let window: Mutex<Window>

    /// Creates a reporter over the end-to-end `lag` histogram, logging every `interval` to `logger`.
    public init(interval: Duration, lag: Histogram, logger: Logger) {
        self.interval = interval
        self.lag = lag
        self.logger = logger
        window = Mutex(Window(previous: lag.snapshot(), previousTime: .now))
    }

    /// Adds a value to every stats line, e.g. `addGauge("outbox.depth") { Double(outbox.count) }`; gauges added
    /// under one key are summed (every webhook sink adds its outbox). Read on the reporter's task: keep `read`
    /// cheap and non-blocking (a cached value, not a database query).
    public func addGauge(_ key: String, read: @escaping @Sendable () -> Double) {
        gauges.withLock { $0.append((key, read)) }
    }

    /// Logs a line every `interval` until `stop` is triggered; with a zero interval (`0s`: off) it logs nothing and
    /// still waits for `stop`: `run`'s service group counts a service that ends before it was asked to as failed.
    public func run(stop: ShutdownSignal) async {
        guard interval > .zero else { return await stop.wait() }
        while await stop.sleep(for: interval) {  // the line's period: a real timer
            logger.info("stats", metadata: takeLine())
        }
    }

    /// The fields of one line covering the time since the previous call (or since creation), and starts the
    /// next window. Gauges are counts (depths, activity ids behind), so they are logged as integers.
    public func takeLine(now: ContinuousClock.Instant = .now) -> LogFields {
        let current = lag.snapshot()
        let (previous, elapsed) = window.withLock { window -> (Histogram.Snapshot, Duration) in
            defer { window = Window(previous: current, previousTime: now) }
            return (window.previous, now - window.previousTime)
        }
        let delta = Self.difference(current, previous)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var line: LogFields = [
            Key.events: delta.count.logValue,
            Key.eventsPerSecond: .number(Self.roundedRate(seconds > 0 ? Double(delta.count) / seconds : 0)),
        ]
        line[Key.lagP50] = Self.quantile(0.5, of: delta, buckets: lag.buckets).map(LogValue.seconds)
        line[Key.lagP99] = Self.quantile(0.99, of: delta, buckets: lag.buckets).map(LogValue.seconds)
        var sums: [String: Double] = [:]
        for gauge in gauges.withLock({ $0 }) { sums[gauge.key, default: 0] += gauge.read() }
        for (key, value) in sums { line[key] = .integer(Int64(saturating: value.rounded())) }
        return line
    }

    // MARK: - Window arithmetic (pure)

    /// `current − previous`, bucket by bucket.
    package static func difference(_ current: Histogram.Snapshot, _ previous: Histogram.Snapshot) -> Histogram.Snapshot {
        let counts = zip(current.bucketCounts, previous.bucketCounts).map { $0 &- $1 }
        return Histogram.Snapshot(
            bucketCounts: counts,
            count: current.count &- previous.count,
            sum: current.sum - previous.sum
        )
    }

    /// The upper bound of the bucket holding the `quantile` observation (`+Inf` above the last bucket), or nil when
    /// there were no observations.
    package static func quantile(_ quantile: Double, of snapshot: Histogram.Snapshot, buckets: [Double]) -> Double? {
        guard snapshot.count > 0 else { return nil }
        let target = max(1, UInt64((Double(snapshot.count) * quantile).rounded(.up)))
        var cumulative: UInt64 = 0
        for (index, count) in snapshot.bucketCounts.enumerated() {
            cumulative += count
            if cumulative >= target { return buckets[index] }
        }
        return .infinity
    }

    /// The rate to one decimal (`12.3`): more digits would only be noise of the window's length.
    package static func roundedRate(_ rate: Double) -> Double {
        Double(Int64(saturating: (rate * 10).rounded())) / 10
    }

    /// `500us`, `25ms`, `2.5s`, `5m`, `>1h`.
    package static func formatSeconds(_ seconds: Double) -> String {
        if seconds == .infinity { return ">1h" }
        if seconds < 0.001 { return "\(Int(saturating: (seconds * 1e6).rounded()))us" }
        if seconds < 1 { return trimmed(seconds * 1000) + "ms" }
        if seconds < 60 { return trimmed(seconds) + "s" }
        if seconds < 3600 { return trimmed(seconds / 60) + "m" }
        return trimmed(seconds / 3600) + "h"
    }

    private static func trimmed(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int64(saturating: rounded))" : "\(rounded)"
    }
}
