/// What happens after a webhook attempt (contract.md "The webhook request", "Retries").
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
    package var schedule: [Duration]
    /// Attempts before dead-lettering.
    package var maxAttempts: Int

    /// Creates a policy.
    package init(schedule: [Duration], maxAttempts: Int) {
        precondition(maxAttempts >= 1, "max_attempts is validated to be at least 1")
        self.schedule = schedule.isEmpty ? [.seconds(5)] : schedule
        self.maxAttempts = maxAttempts
    }

    /// Whether a status is retried: 408, 429 and 5xx.
    package static func isRetriable(status: Int) -> Bool {
        status == 408 || status == 429 || (500...599).contains(status)
    }

    /// Decides after attempt number `attempt` (1-based). `jitter` is the random factor in [0.8, 1.2].
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
        if let retryAfter, retryAfter > delay { delay = retryAfter }
        return .retry(after: delay)
    }

    /// A random jitter factor in [0.8, 1.2].
    package static func randomJitter() -> Double { Double.random(in: 0.8...1.2) }
}
