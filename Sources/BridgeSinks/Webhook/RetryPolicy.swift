internal import BridgeEvents

/// What happens after a webhook attempt (README.md "Webhooks": retries and dead letters).
package struct RetryPolicy: Sendable, Equatable {
    /// The outcome of one attempt.
    package enum Outcome: Sendable, Equatable {
        /// The receiver answered with this status.
        case status(Int, retryAfter: Duration?)
        /// No usable answer: connection failure or timeout (always retried).
        case transportFailure(String)
    }

    /// The decision.
    package enum Decision: Sendable, Equatable {
        /// 2xx.
        case delivered
        /// Try again after this delay.
        case retry(after: Duration)
        /// Give up and move to the dead letters.
        case deadLetter(reason: String)
    }

    /// Delay before attempt 2, 3, …; the last entry repeats.
    package let schedule: [Duration]
    /// Attempts before dead-lettering.
    package let maxAttempts: Int
    /// The longest entry of `schedule`: a receiver's `Retry-After` is clamped to it (docs/RELIABILITY.md), so
    /// no answer can park a row longer than the sink's own schedule would.
    package let longestScheduledDelay: Duration

    /// The longest wait `decide` can ask for: the longest scheduled delay at the largest jitter (a clamped
    /// `Retry-After` is never longer).
    package var longestWait: Duration { longestScheduledDelay * Self.largestJitter }

    /// The largest jitter factor (`randomJitter`'s upper end).
    package static let largestJitter = 1.2

    /// Creates a policy.
    package init(schedule: [Duration], maxAttempts: Int) {
        precondition(maxAttempts >= 1, "max_attempts is validated to be at least 1")
        self.schedule = schedule.isEmpty ? [.seconds(5)] : schedule
        self.maxAttempts = maxAttempts
        longestScheduledDelay = self.schedule.max() ?? .seconds(5)
    }

    /// Whether a status is retried: 408, 429 and 5xx.
    package static func isRetriable(status: Int) -> Bool {
        status == 408 || status == 429 || (500...599).contains(status)
    }

    /// Decides after attempt number `attempt` (1-based). `jitter` is the random factor in [0.8, 1.2]. A
    /// `Retry-After` longer than the jittered scheduled delay wins, up to `longestScheduledDelay`.
    package func decide(attempt: Int, outcome: Outcome, jitter: Double) -> Decision {
        var retryAfter: Duration?
        switch outcome {
        case .status(let status, let after):
            if (200...299).contains(status) { return .delivered }
            guard Self.isRetriable(status: status) else {
                return .deadLetter(reason: "HTTP \(status) is not retried")
            }
            retryAfter = after
        case .transportFailure:
            break
        }
        guard attempt < maxAttempts else {
            return .deadLetter(reason: "gave up after \(attempt) attempts")
        }
        let base = schedule[min(attempt - 1, schedule.count - 1)]
        var delay = base * jitter
        if let retryAfter {
            delay = max(delay, min(retryAfter, longestScheduledDelay))
        }
        return .retry(after: delay)
    }

    /// A random jitter factor in [0.8, 1.2].
    package static func randomJitter() -> Double { Double.random(in: 0.8...largestJitter) }
}
