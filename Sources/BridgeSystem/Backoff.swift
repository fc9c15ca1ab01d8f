/// Exponential backoff with full jitter between `initialDelay` and `maxDelay`, reset after a long-lived connection.
///
/// Attempt n (0-based) waits a uniformly random time in `[initialDelay, min(maxDelay, initialDelay · 2ⁿ)]`, so a
/// fleet of bridges restarted with Directus does not reconnect in lock-step (Directus's own SDK retries at a fixed
/// delay). The one backoff of the bridge: reconnects, REST retries, sink retries (`retrying(until:…)`).
package struct Backoff: Sendable {
    package let initialDelay: Duration
    package let maxDelay: Duration
    package let resetAfter: Duration
    /// Consecutive failed or short-lived connections so far.
    package private(set) var attempt = 0

    /// Creates the policy (typically from `directus.reconnect`); `resetAfter` only matters to `connectionEnded`.
    package init(initialDelay: Duration, maxDelay: Duration, resetAfter: Duration = .seconds(60)) {
        self.initialDelay = initialDelay
        self.maxDelay = max(maxDelay, initialDelay)
        self.resetAfter = resetAfter
    }

    /// The delay before the next attempt; advances the attempt counter.
    package mutating func nextDelay<R: RandomNumberGenerator>(using random: inout R) -> Duration {
        let ceiling = upperBound(forAttempt: attempt)
        attempt += 1
        let low = Self.seconds(initialDelay)
        let high = Self.seconds(ceiling)
        guard high > low else { return initialDelay }
        return .nanoseconds(Int64(saturating: Double.random(in: low...high, using: &random) * 1e9))
    }

    /// The delay before the next attempt, from the system random generator.
    package mutating func nextDelay() -> Duration {
        var generator = SystemRandomNumberGenerator()
        return nextDelay(using: &generator)
    }

    /// A connection ended after `lifetime`; one that lived `resetAfter` or longer resets the backoff.
    package mutating func connectionEnded(after lifetime: Duration) {
        if lifetime >= resetAfter { attempt = 0 }
    }

    /// Forgets earlier failures (e.g. after a successful re-login).
    package mutating func reset() { attempt = 0 }

    /// The largest delay attempt `n` may wait.
    package func upperBound(forAttempt n: Int) -> Duration {
        var ceiling = initialDelay
        var step = 0
        while step < n && ceiling < maxDelay {
            ceiling = ceiling * 2
            step += 1
        }
        return min(ceiling, maxDelay)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
