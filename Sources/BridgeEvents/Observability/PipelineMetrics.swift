public import BridgeSystem
internal import BridgeJSON
internal import Synchronization

/// Latency buckets in seconds, from sub-millisecond (live events) to an hour (webhook retries after an outage).
package let latencyBuckets: [Double] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600,
]

/// The metrics of the event path: events received and emitted by collection/event/origin, drops, lag.
///
/// Per-label counters are cached here, so the hot path pays one dictionary lookup per (collection, event, origin)
/// per batch, not a registry lookup per event.
public final class PipelineMetrics: Sendable {
    private struct LabelKey: Hashable {
        package var collection: String
        package var event: ChangeEvent
        package var origin: EventOrigin
    }

    private let registry: MetricsRegistry
    private let emittedCounters = Mutex<[LabelKey: Counter]>([:])
    private let receivedCounters = Mutex<[LabelKey: Counter]>([:])
    private let lag: Histogram
    private let pipelineLatency: Histogram
    private let lastEventTime: Gauge
    /// When the last event was emitted, in nanoseconds after `started` (the monotonic clock): its age is elapsed
    /// time, whatever the wall clock did meanwhile.
    private let lastEmitted = Atomic<Int64>(0)
    private let started = ContinuousClock.now
    private let sinkRetries: Counter
    private let droppedQueueFull: Counter
    private let droppedTooLarge: Counter
    private let droppedWithoutKey: Counter

    /// Registers the pipeline metrics in `registry`.
    public init(registry: MetricsRegistry) {
        self.registry = registry
        lag = registry.histogram(
            "directus_bridge_event_lag_seconds",
            help: "End-to-end lag from the change (activity timestamp, else receipt) to the event being emitted.",
            buckets: latencyBuckets)
        pipelineLatency = registry.histogram(
            "directus_bridge_pipeline_latency_seconds",
            help: "Time from a batch's source frame or read to every sink having accepted it.",
            buckets: latencyBuckets)
        lastEventTime = registry.gauge(
            "directus_bridge_last_event_timestamp_seconds",
            help: "Unix time of the last event emitted to the sinks (0 before the first).")
        sinkRetries = registry.counter(
            "directus_bridge_sink_retries_total", help: "Failed sink writes that were retried.")
        let droppedHelp =
            "Live-mode events dropped (never snapshot, resync or activity events): a sink or its queue was full "
            + "(queue_full, once per sink), or a socket message over the size limit was read past "
            + "(message_too_large, one per message), or an event item came without its primary key (no_primary_key); "
            + "per sink: directus_bridge_sink_dropped_total."
        droppedQueueFull = registry.counter(
            "directus_bridge_events_dropped_total", help: droppedHelp, labels: [("reason", "queue_full")])
        droppedTooLarge = registry.counter(
            "directus_bridge_events_dropped_total", help: droppedHelp, labels: [("reason", "message_too_large")])
        droppedWithoutKey = registry.counter(
            "directus_bridge_events_dropped_total", help: droppedHelp, labels: [("reason", "no_primary_key")])
        // Counted on the monotonic clock: from wall-clock times, a clock set back an hour made the age -3600 and one
        // set forward raised a "no events for an hour" alert (docs/RELIABILITY.md, "Careless or hostile operators").
        registry.gaugeFunction(
            "directus_bridge_last_event_age_seconds",
            help: "Seconds since the last event was emitted (since start before the first).",
            read: { [weak self] in self?.lastEventAge ?? 0 })
    }

    /// Creates the received and emitted series of `collections` at zero, for every event and origin a change can
    /// have (a `snapshot` event has the origin `snapshot`, the others `live` or `backfill`): a dashboard's rate and an
    /// alert's `increase` see the series from the start instead of from the first event.
    public func prepare(collections: some Sequence<String>) {
        let changes: [ChangeEvent] = [.create, .update, .delete]
        for collection in Set(collections) {
            var keys = [LabelKey(collection: collection, event: .snapshot, origin: .snapshot)]
            for event in changes {
                keys += [EventOrigin.live, .backfill].map { LabelKey(collection: collection, event: event, origin: $0) }
            }
            for key in keys {
                _ = counter(for: key, in: receivedCounters, name: Self.receivedName, help: Self.receivedHelp)
                _ = counter(for: key, in: emittedCounters, name: Self.emittedName, help: Self.emittedHelp)
            }
        }
    }

    private static let receivedName = "directus_bridge_events_received_total"
    private static let receivedHelp =
        "Events received from Directus (socket or activity log), by collection, event and origin."
    private static let emittedName = "directus_bridge_events_emitted_total"
    private static let emittedHelp = "Events accepted by every sink, by collection, event and origin."

    /// Counts events handed to the queue (received from Directus).
    public func received(_ events: [EncodedEvent]) {
        count(events, in: receivedCounters, name: Self.receivedName, help: Self.receivedHelp)
    }

    /// Counts emitted events and their lag (called by the dispatcher after every sink accepted a batch).
    public func emitted(_ events: [EncodedEvent], now: Timestamp) {
        guard !events.isEmpty else { return }
        count(events, in: emittedCounters, name: Self.emittedName, help: Self.emittedHelp)
        // A socket read's events share one time: each run of equal times is one observation with its count, and the
        // events are read in place (a copy of each retained and released its id and body).
        events.withUnsafeBufferPointer { events in
            var index = 0
            while index < events.count {
                let time = events[index].time.microsecondsSinceEpoch
                var end = index &+ 1
                while end < events.count && events[end].time.microsecondsSinceEpoch == time { end &+= 1 }
                lag.observe(Double(now.microsecondsSinceEpoch - time) / 1e6, times: UInt64(end &- index))
                index = end
            }
        }
        lastEventTime.set(Double(now.microsecondsSinceEpoch) / 1e6)
        lastEmitted.store(Self.nanoseconds(ContinuousClock.now - started), ordering: .relaxed)
    }

    /// Seconds since the last event was emitted (since this object was made before the first).
    private var lastEventAge: Double {
        Double(Self.nanoseconds(ContinuousClock.now - started) - lastEmitted.load(ordering: .relaxed)) / 1e9
    }

    /// Whole nanoseconds of a non-negative elapsed time (saturating: 292 years).
    private static func nanoseconds(_ elapsed: Duration) -> Int64 {
        let (seconds, attoseconds) = elapsed.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? Int64.max : whole &+ attoseconds / 1_000_000_000
    }

    /// Records how long a batch took from arrival to acceptance.
    public func observeLatency(since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        pipelineLatency.observe(
            Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// Counts a retried sink write.
    public func sinkRetried() { sinkRetries.increment() }

    /// Counts live events dropped at a full queue.
    public func dropped(_ count: Int) { droppedQueueFull.increment(by: UInt64(count)) }

    /// Counts socket messages over the size limit read past in live mode, one event each (their events are never
    /// parsed: at least one was lost).
    public func droppedTooLarge(_ count: Int) { droppedTooLarge.increment(by: UInt64(count)) }

    /// Counts live event items that came without a usable primary key (no line can be made of them).
    public func droppedWithoutKey(_ count: Int) { droppedWithoutKey.increment(by: UInt64(count)) }

    /// The end-to-end lag histogram (for the periodic stats line).
    public var lagHistogram: Histogram { lag }

    private func count(_ events: [EncodedEvent], in cache: borrowing Mutex<[LabelKey: Counter]>, name: String, help: String) {
        // Runs of events with the same labels (a frame's items, a page of a backfill) are counted without hashing:
        // a dictionary lookup per event was a visible share of the live path's CPU. The events are read in place:
        // a copy of each (its id, key and body retained and released) was the runner's largest cost after the write.
        var tally: [LabelKey: UInt64] = [:]
        events.withUnsafeBufferPointer { events in
            var index = 0
            while index < events.count {
                let first = index
                var end = index &+ 1
                while end < events.count && events[end].event == events[first].event
                    && events[end].origin == events[first].origin
                    && events[end].collection == events[first].collection
                {
                    end &+= 1
                }
                let key = LabelKey(
                    collection: events[first].collection, event: events[first].event, origin: events[first].origin)
                tally[key, default: 0] += UInt64(end &- first)
                index = end
            }
        }
        for (key, amount) in tally {
            counter(for: key, in: cache, name: name, help: help).increment(by: amount)
        }
    }

    private func counter(for key: LabelKey, in cache: borrowing Mutex<[LabelKey: Counter]>, name: String, help: String)
        -> Counter
    {
        if let existing = cache.withLock({ $0[key] }) { return existing }
        let created = registry.counter(
            name, help: help,
            labels: [("collection", key.collection), ("event", key.event.rawValue), ("origin", key.origin.rawValue)])
        cache.withLock { $0[key] = created }
        return created
    }
}
