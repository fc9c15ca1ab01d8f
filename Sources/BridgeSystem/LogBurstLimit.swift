/// Lets the first `burst` lines of one kind through in each `window` and counts the rest, so that a flood logs
/// examples and a total instead of a line per event: a receiver that answers a few thousand deliveries with 410 (or a
/// broker that refuses a stream of events) dead-letters each of them within seconds, and `dlq list` has every one.
///
/// The caller logs each line through `log` and calls `flush` on its periodic turn, so a total is said within a
/// turn of its window's end even when no further line comes.
package struct LogBurstLimit: Sendable {
    package let burst: Int
    package let window: Duration
    private var windowStart: ContinuousClock.Instant?
    private var logged = 0
    private var held = 0

    package init(burst: Int = 10, window: Duration = .seconds(10)) {
        self.burst = max(1, burst)
        self.window = window
    }

    /// Runs `line` unless `burst` lines went out in the current window (then counts it). A total held back in an
    /// ended window is handed to `total` first, so it comes before the lines of the next window.
    package mutating func log(now: ContinuousClock.Instant, line: () -> Void, total: (Int) -> Void) {
        flush(now: now, total: total)
        if let start = windowStart, now - start < window {
            guard logged < burst else {
                held += 1
                return
            }
            logged += 1
        } else {
            windowStart = now
            logged = 1
        }
        line()
    }

    /// Hands the lines held back to `total` once their window ended (nothing when none were).
    package mutating func flush(now: ContinuousClock.Instant, total: (Int) -> Void) {
        guard let start = windowStart, now - start >= window else { return }
        finish(total: total)
    }

    /// Hands the lines held back to `total` now, window ended or not (at shutdown).
    package mutating func finish(total: (Int) -> Void) {
        guard held > 0 else { return }
        let count = held
        held = 0
        total(count)
    }
}
