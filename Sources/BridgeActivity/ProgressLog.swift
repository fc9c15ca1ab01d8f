package import BridgeSystem
internal import BridgeEvents
internal import BridgeDirectus

/// Progress of long work — a snapshot, a backfill: info lines at most every `interval` (items done, the total when
/// Directus counted it, rate, what remains and the estimated time left) and the same numbers in gauges.
///
/// The estimate divides what remains by how fast it has been shrinking, so it is right whatever unit remains in:
/// items of a snapshot, activity ids of a backfill (ids can be sparse, and not every id gives an event).
package struct ProgressLog {
    private let message: String
    private let interval: Duration
    private let logger: Logger
    private let gauges: ProgressGauges?
    private let started = ContinuousClock.now
    private var lastLine: ContinuousClock.Instant
    private var firstRemaining: (count: Int, at: ContinuousClock.Instant)?
    private(set) var done = 0

    /// Starts counting; lines are written at most every `interval`, gauges are set on every advance.
    package init(_ message: String, interval: Duration, logger: Logger, gauges: ProgressGauges? = nil) {
        self.message = message
        self.interval = interval
        self.logger = logger
        self.gauges = gauges
        lastLine = started
        gauges?.start()
    }

    /// Counts `count` more items; `total` is the whole when known, `remaining` what is left (in any unit).
    package mutating func advance(by count: Int, metadata: LogMetadata = [:], total: Int? = nil, remaining: Int? = nil) {
        done += count
        let now = ContinuousClock.now
        if let remaining, firstRemaining == nil {
            // With a total, all of it remained at the start; otherwise the pace is measured from here on.
            firstRemaining = total.map { ($0, started) } ?? (remaining, now)
        }
        let eta = remaining.flatMap { estimate(remaining: $0, now: now) }
        gauges?.update(done: done, total: total, rate: rate, eta: eta)
        guard now - lastLine >= interval else { return }
        lastLine = now
        var fields = metadata
        fields[LogKey.count] = done
        fields["rate_per_second"] = Int(saturating: rate)
        if let total { fields["total"] = total }
        if let remaining { fields["remaining"] = remaining }
        // `remaining` can come from a server's count: a tiny rate makes the estimate beyond any integer.
        if let eta { fields["eta_seconds"] = Int(saturating: eta.rounded(.up)) }
        logger.info(message, metadata: fields)
    }

    /// The work ended (done or stopped): the gauges say it no longer runs.
    package func finish() { gauges?.finish() }

    /// Seconds left at the pace `remaining` has been shrinking since it was first known; nil before it shrank.
    private func estimate(remaining: Int, now: ContinuousClock.Instant) -> Double? {
        guard let first = firstRemaining else { return nil }
        let shrunk = Double(first.count) - Double(remaining)
        let seconds = Self.seconds(now - first.at)
        guard shrunk > 0, seconds > 0 else { return nil }
        return Double(max(0, remaining)) / (shrunk / seconds)
    }

    /// Items per second since the start.
    package var rate: Double {
        let seconds = elapsedSeconds
        return seconds > 0 ? Double(done) / seconds : 0
    }

    /// Seconds since the start.
    package var elapsedSeconds: Double { Self.seconds(ContinuousClock.now - started) }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// The gauges of one kind of long work (docs/configuration.md "Metrics"): whether it runs, items done, the total
/// when known, the rate and the estimated seconds left. Set by `ProgressLog`.
package struct ProgressGauges: Sendable {
    let running: Gauge
    let done: Gauge
    let rate: Gauge
    let eta: Gauge
    /// Registered when the first total is known, so an unknown total is absent, never 0; nil for work whose total
    /// is never known (a backfill: activity ids are sparse).
    let total: (@Sendable () -> Gauge)?

    func start() {
        running.set(1)
        done.set(0)
        rate.set(0)
        eta.set(0)
    }

    func update(done count: Int, total expected: Int?, rate perSecond: Double, eta seconds: Double?) {
        done.set(Double(count))
        rate.set(perSecond)
        if let seconds { eta.set(seconds) }
        if let expected, let total { total().set(Double(expected)) }
    }

    func finish() {
        running.set(0)
        eta.set(0)
    }
}
