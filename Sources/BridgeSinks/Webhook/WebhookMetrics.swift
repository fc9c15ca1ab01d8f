package import BridgeEvents
package import BridgeSystem
internal import Synchronization

/// The outbox and dead-letter counts of one webhook sink as its delivery service last saw them (after every
/// turn; recounted in the database every poll interval). Cheap to read from anywhere: scrapes and the stats line.
package final class WebhookDepths: Sendable {
    private let outboxCount = Atomic<Int>(0)
    private let deadLetterCount = Atomic<Int>(0)

    /// Creates zero counts.
    package init() {}

    /// Rung each time the delivery service counted the outbox empty (after it committed outcomes, or a turn with
    /// nothing to read): a webhook sink with shared state waits on it for its outbox to empty. Not at every count: a
    /// waiter woken at each commit of a few outcomes cost the `webhook-delivery` benchmark 7–13 % more CPU per
    /// delivery than its former 1 ms poll (BENCHMARKS.md, "Issue 26: waits that were polls").
    package let outboxEmptied = Wakeup()

    /// Events waiting in the outbox.
    package var outbox: Int {
        get { outboxCount.load(ordering: .relaxed) }
        set {
            outboxCount.store(newValue, ordering: .relaxed)
            if newValue == 0 { outboxEmptied.ring() }
        }
    }

    /// Dead letters stored.
    package var deadLetters: Int {
        get { deadLetterCount.load(ordering: .relaxed) }
        set { deadLetterCount.store(newValue, ordering: .relaxed) }
    }

    /// Counts `count` new dead letters.
    package func addDeadLetters(_ count: Int) { deadLetterCount.wrappingAdd(count, ordering: .relaxed) }
}

/// The metrics of one webhook sink, labelled `sink="<sink id>"` (names prefixed `directus_bridge_webhook_`).
///
/// Counter handles for every (outcome, status class) pair are made up front, so recording an attempt costs one
/// array index and one atomic add.
package final class WebhookMetrics: Sendable {
    /// What an attempt led to.
    package enum AttemptResult: Int, Sendable, CaseIterable {
        case delivered, retry, deadLetter, cancelled

        package var label: String {
            switch self {
            case .delivered: "delivered"
            case .retry: "retry"
            case .deadLetter: "dead_letter"
            case .cancelled: "cancelled"
            }
        }
    }

    private static let statusClasses = ["1xx", "2xx", "3xx", "4xx", "5xx", "error"]

    private let attempts: [[Counter]]
    private let retries: Counter
    private let deadLetters: Counter
    private let outboxFull: Counter
    private let idConflictCount: Counter
    private let latency: Histogram

    /// Registers the metrics of sink `sink` in `registry`; the depth gauges read `depths` at scrape time.
    package init(registry: MetricsRegistry, sink: String, depths: WebhookDepths) {
        let label = ("sink", sink)
        attempts = AttemptResult.allCases.map { result in
            Self.statusClasses.map { statusClass in
                registry.counter(
                    "directus_bridge_webhook_attempts_total",
                    help: "Webhook attempts by outcome and HTTP status class (error = no answer).",
                    labels: [label, ("outcome", result.label), ("status_class", statusClass)]
                )
            }
        }
        retries = registry.counter(
            "directus_bridge_webhook_retries_total",
            help: "Webhook attempts that failed and were scheduled again.",
            labels: [label]
        )
        deadLetters = registry.counter(
            "directus_bridge_webhook_dead_letters_total",
            help: "Webhook deliveries moved to the dead letters.",
            labels: [label]
        )
        outboxFull = registry.counter(
            "directus_bridge_webhook_outbox_full_total",
            help: "Batches the webhook sink refused because its outbox was full (intake paused).",
            labels: [label]
        )
        idConflictCount = registry.counter(
            "directus_bridge_webhook_id_conflicts_total",
            help: "Events not queued because another event held their id in the outbox (a bug; logged at error level).",
            labels: [label]
        )
        latency = registry.histogram(
            "directus_bridge_webhook_delivery_latency_seconds",
            help: "Time from entering the outbox to a 2xx answer, retries included.",
            labels: [label],
            buckets: latencyBuckets
        )
        registry.gaugeFunction(
            "directus_bridge_webhook_outbox_depth",
            help: "Webhook deliveries waiting in the outbox.",
            labels: [label],
            read: { Double(depths.outbox) }
        )
        registry.gaugeFunction(
            "directus_bridge_webhook_dead_letter_depth",
            help: "Dead-lettered webhook deliveries stored.",
            labels: [label],
            read: { Double(depths.deadLetters) }
        )
    }

    /// Counts one attempt; `status` is nil when there was no answer.
    package func attempted(_ result: AttemptResult, status: Int?) {
        let statusIndex = status.map { min(max($0 / 100 - 1, 0), 4) } ?? 5
        attempts[result.rawValue][statusIndex].increment()
        switch result {
        case .retry: retries.increment()
        case .deadLetter: deadLetters.increment()
        case .delivered, .cancelled: break
        }
    }

    /// Records a delivery `seconds` after the event entered the outbox.
    package func delivered(afterSeconds seconds: Double) { latency.observe(max(0, seconds)) }

    /// Counts a batch refused because the outbox was full.
    package func refusedBatch() { outboxFull.increment() }

    /// Counts `count` events whose id another event held in the outbox.
    package func idConflicts(_ count: Int) { idConflictCount.increment(by: UInt64(count)) }
}
