internal import BridgeSystem
internal import Synchronization
package import BridgeEvents

/// One sink's metrics, labelled `sink=<its stable id>`: events it accepted, live events it dropped, its queue.
package final class SinkMetrics: Sendable {
    private let acceptedCounter: Counter
    private let droppedCounter: Counter
    /// When a drop was last logged: at most one error line every 10 s per sink, each with the running total.
    private let lastDropLog = Mutex<ContinuousClock.Instant?>(nil)

    /// Registers the sink's metrics.
    package init(registry: MetricsRegistry, sink: String, queue: EventQueue) {
        acceptedCounter = registry.counter(
            "directus_bridge_sink_events_total", help: "Events a sink accepted.", labels: [("sink", sink)])
        droppedCounter = registry.counter(
            "directus_bridge_sink_dropped_total",
            help: "Live events a sink dropped: it or its queue was full (the other sinks still got them), or a "
                + "socket message over the size limit was read past (every sink lost it; counted as one event).",
            labels: [("sink", sink)])
        registry.gaugeFunction(
            "directus_bridge_sink_queue_depth", help: "Events waiting in a sink's queue.", labels: [("sink", sink)]
        ) { [queue] in Double(queue.depth) }
        registry.gaugeFunction(
            "directus_bridge_sink_queue_bytes", help: "Bytes of event lines waiting in a sink's queue.",
            labels: [("sink", sink)]
        ) { [queue] in Double(queue.bytes) }
    }

    /// Counts accepted events.
    package func accepted(_ count: Int) { acceptedCounter.increment(by: UInt64(count)) }

    /// Counts dropped events; true when this drop should be logged.
    package func dropped(_ count: Int) -> Bool {
        droppedCounter.increment(by: UInt64(count))
        let now = ContinuousClock.now
        return lastDropLog.withLock { last in
            if let previous = last, now - previous < .seconds(10) { return false }
            last = now
            return true
        }
    }

    /// Every event dropped so far.
    package var droppedTotal: UInt64 { droppedCounter.value }
}
