package import BridgeSystem
package import BridgeEvents
package import BridgeDirectus

/// Rate-limited progress lines for long backfills and snapshots: items done, rate, and what remains when known.
package struct ProgressLog {
    private let message: String
    private let interval: Duration
    private let logger: Logger
    private let started = ContinuousClock.now
    private var lastLine: ContinuousClock.Instant
    private(set) var done = 0

    /// Starts counting; lines are written at most every `interval`.
    package init(_ message: String, interval: Duration, logger: Logger) {
        self.message = message
        self.interval = interval
        self.logger = logger
        lastLine = started
    }

    /// Whether a line is due now.
    package var isDue: Bool { ContinuousClock.now - lastLine >= interval }

    /// Counts `count` more items and writes a line when one is due; `remaining()` is asked only then.
    package mutating func advance(by count: Int, metadata: LogMetadata = [:], remaining: () -> Int? = { nil }) {
        done += count
        guard isDue else { return }
        lastLine = .now
        var fields = metadata
        fields[LogKey.count] = String(done)
        fields["rate_per_second"] = String(Int(saturating: rate))
        if let left = remaining() {
            fields["remaining"] = String(left)
            // `left` comes from a server's count: a tiny rate makes the estimate beyond any integer.
            if rate > 0 { fields["eta_seconds"] = String(Int(saturating: Double(left) / rate)) }
        }
        logger.info(message, metadata: fields)
    }

    /// Items per second since the start.
    package var rate: Double {
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return seconds > 0 ? Double(done) / seconds : 0
    }

    /// Seconds since the start.
    package var elapsedSeconds: Double {
        let elapsed = ContinuousClock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
