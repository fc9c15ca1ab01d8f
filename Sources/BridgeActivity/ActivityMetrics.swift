public import BridgeConfig
internal import Synchronization
public import BridgeEvents
internal import BridgeDirectus

/// The activity reader's metrics: cursor, head and lag of the activity log, backfill and snapshot counters, and
/// which delivery mode is in force.
public final class ActivityMetrics: Sendable {
    /// The newest activity id the reader has seen.
    package let head: Gauge
    /// Activity reads (pages and gap checks).
    package let reads: Counter
    /// Events recovered while catching up (origin `backfill`).
    package let backfillEvents: Counter
    /// Items emitted by snapshots.
    package let snapshotItems: Counter
    /// Gaps given up on after the gap timeout (rows of rolled-back transactions, or lost).
    package let abandonedGaps: Counter
    /// Gaps wider than a jump given up on (a reseeded sequence, sparse ids), counted once per jump.
    package let idJumps: Counter
    /// Activity ids the cursor still needed whose rows Directus's retention had deleted.
    package let retentionLost: Counter
    /// Failed activity reads (Directus unreachable or refusing).
    package let readFailures: Counter
    /// Item reads Directus refused (permissions, invalid query): those changes got no line.
    package let refusedReads: Counter
    /// REST answers over the size limit, read again with fewer keys per request.
    package let oversizedAnswers: Counter
    /// Items, deltas and revision snapshots too large to read even alone: their lines go out without them.
    package let omittedForSize: Counter
    /// The sinks whose reader is catching up (events are `backfill`).
    private let backfilling = BackfillingSinks()
    private let registry: MetricsRegistry
    private let cursor: @Sendable () -> Int64?

    /// Activity rows between the newest id seen and the durable cursor (also in the periodic stats line).
    public var lag: Double { max(0, head.value - Double(cursor() ?? 0)) }

    /// Registers the metrics; the cursor and lag gauges read `cursor()` (the durable committed id) at scrape time.
    public init(registry: MetricsRegistry, cursor: @escaping @Sendable () -> Int64?) {
        self.registry = registry
        let head = registry.gauge(
            "directus_bridge_activity_head",
            help: "Newest directus_activity id seen by the activity reader."
        )
        self.head = head
        registry.gaugeFunction(
            "directus_bridge_activity_cursor",
            help: "Activity id up to which every change was accepted by every sink (the lowest sink cursor)."
        ) { Double(cursor() ?? 0) }
        self.cursor = cursor
        registry.gaugeFunction(
            "directus_bridge_activity_lag_rows",
            help: "Activity rows between the head and the durable cursor."
        ) { max(0, head.value - Double(cursor() ?? 0)) }
        reads = registry.counter("directus_bridge_activity_reads_total", help: "Reads of the activity log.")
        backfillEvents = registry.counter(
            "directus_bridge_backfill_events_total",
            help: "Events recovered from the activity log while catching up."
        )
        snapshotItems = registry.counter(
            "directus_bridge_snapshot_items_total",
            help: "Items emitted by subscription snapshots."
        )
        abandonedGaps = registry.counter(
            "directus_bridge_activity_gaps_abandoned_total",
            help: "Activity ids that never appeared within the gap timeout (rolled-back transactions)."
        )
        idJumps = registry.counter(
            "directus_bridge_activity_id_jumps_total",
            help: "Jumps of the activity id sequence read past (gaps wider than 10000 ids that never filled)."
        )
        retentionLost = registry.counter(
            "directus_bridge_activity_retention_lost_total",
            help: "Activity ids the cursor still needed whose rows were deleted (retention) before they were read; "
                + "an upper bound of the changes lost."
        )
        readFailures = registry.counter(
            "directus_bridge_activity_read_failures_total",
            help: "Activity-log reads that failed and were retried."
        )
        registry.gaugeFunction(
            "directus_bridge_activity_backfilling",
            help: "1 while an activity reader (one per sink) catches up after start-up, a reconnect, a failed read or "
                + "a pause of its sink."
        ) { [backfilling] in backfilling.isAnyOn ? 1 : 0 }
        oversizedAnswers = registry.counter(
            "directus_bridge_activity_oversized_answers_total",
            help: "REST answers over the size limit (16 MiB), read again with fewer keys per request."
        )
        omittedForSize = registry.counter(
            "directus_bridge_activity_omitted_for_size_total",
            help: "Items, deltas or revision snapshots over 64 MiB even alone; their lines went out without them."
        )
        refusedReads = registry.counter(
            "directus_bridge_activity_refused_reads_total",
            help: "Item reads for a subscription that Directus refused (permissions, query); those changes are skipped."
        )
    }

    /// Publishes the delivery mode in force: `directus_bridge_delivery_mode{mode}` is 1 for it, 0 for the other.
    /// `fallback` counts an `auto` that had to fall back to live.
    public static func publish(mode: DeliveryMode, fallback: Bool, registry: MetricsRegistry) {
        for candidate in [DeliveryMode.activity, .live] {
            registry.gauge(
                "directus_bridge_delivery_mode",
                help: "The delivery mode in force (1) after resolving auto.",
                labels: [("mode", candidate.rawValue)]
            ).set(candidate == mode ? 1 : 0)
        }
        let fallbacks = registry.counter(
            "directus_bridge_activity_fallbacks_total",
            help: "Starts where delivery.mode auto fell back to live because directus_activity is not readable."
        )
        if fallback { fallbacks.increment() }
    }

    /// Activity rows between the newest id seen and `store`'s cursor (one sink's lag).
    package func lag(of store: CursorStore) -> Int64 {
        // The head gauge holds an id from Directus as a Double: clamped before it becomes an integer again.
        let head = self.head.value
        let newest = head >= 9.2e18 ? Int64.max : Int64(max(0, head))
        let committed = store.cursor?.committed ?? newest
        return newest > committed ? newest - committed : 0
    }

    /// The progress gauges of a snapshot of subscription `uid` by `sink`'s reader (each sink's reader takes its own).
    func snapshotProgress(uid: String, sink: String) -> ProgressGauges {
        let labels = [("subscription", uid), ("sink", sink)]
        let registry = registry
        return ProgressGauges(
            running: registry.gauge(
                "directus_bridge_snapshot_running", help: "1 while the subscription's snapshot runs.", labels: labels),
            done: registry.gauge(
                "directus_bridge_snapshot_done_items", help: "Items emitted by the subscription's current or last snapshot.",
                labels: labels),
            rate: registry.gauge(
                "directus_bridge_snapshot_rate_items_per_second",
                help: "Items per second of the subscription's current or last snapshot.", labels: labels),
            eta: registry.gauge(
                "directus_bridge_snapshot_eta_seconds",
                help: "Estimated seconds until the subscription's snapshot is done (0 when none runs).", labels: labels),
            total: {
                registry.gauge(
                    "directus_bridge_snapshot_expected_items",
                    help: "Items the subscription's snapshot reads, as Directus counted them at its start.",
                    labels: labels)
            })
    }

    /// The progress gauges of a long backfill (one that needs more than one page of the activity log) by `sink`'s
    /// reader; the reader asks for them when it starts, so that they exist before the first backfill.
    func backfillProgress(sink: String) -> ProgressGauges {
        let labels = [("sink", sink)]
        return ProgressGauges(
            running: registry.gauge(
                "directus_bridge_backfill_running", help: "1 while a long backfill runs.", labels: labels),
            done: registry.gauge(
                "directus_bridge_backfill_done_events", help: "Events recovered by the current or last long backfill.",
                labels: labels),
            rate: registry.gauge(
                "directus_bridge_backfill_rate_events_per_second",
                help: "Events per second of the current or last long backfill.", labels: labels),
            eta: registry.gauge(
                "directus_bridge_backfill_eta_seconds",
                help: "Estimated seconds until the backfill reaches the newest activity id (0 when none runs).",
                labels: labels),
            total: nil)
    }

    /// Notes whether `sink`'s reader is catching up.
    package func setBackfilling(_ on: Bool, sink: String) { backfilling.set(on, sink: sink) }

    /// Notes the newest activity id seen.
    package func saw(head id: Int64) {
        if Double(id) > head.value { head.set(Double(id)) }
    }
}

/// Which sinks' activity readers are catching up.
private final class BackfillingSinks: Sendable {
    private let sinks = Mutex<Set<String>>([])

    package func set(_ on: Bool, sink: String) {
        sinks.withLock { sinks in
            if on { sinks.insert(sink) } else { sinks.remove(sink) }
        }
    }

    package var isAnyOn: Bool { sinks.withLock { !$0.isEmpty } }
}
