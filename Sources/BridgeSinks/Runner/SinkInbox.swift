package import BridgeSystem
package import BridgeEvents

/// One sink's bounded buffer (`delivery.max_queue` events, `delivery.max_queue_bytes` bytes of their lines) between
/// what reads Directus and the sink's runner.
///
/// Live batches are *offered*: when the inbox is full, or the sink itself is full (a webhook outbox at
/// `max_outbox`), that sink alone drops them — counted in `directus_bridge_sink_dropped_total{sink}` and logged at
/// error level — while the other sinks carry on. The sink's activity reader *puts* into `queue` instead (it waits:
/// what it did not hand over it reads again from the sink's cursor).
package final class SinkInbox: Sendable {
    /// The sink's stable id (log field and metric label).
    package let sinkID: String
    /// The buffer the sink's runner takes from.
    package let queue: EventQueue
    package let metrics: SinkMetrics
    private let pipelineMetrics: PipelineMetrics
    private let logger: Logger

    /// Creates the inbox of one sink and registers its metrics.
    package init(
        sinkID: String, capacity: Int, maxBytes: Int, registry: MetricsRegistry,
        pipelineMetrics: PipelineMetrics, logger: Logger
    ) {
        self.sinkID = sinkID
        queue = EventQueue(capacity: capacity, maxBytes: maxBytes)
        metrics = SinkMetrics(registry: registry, sink: sinkID, queue: queue)
        self.pipelineMetrics = pipelineMetrics
        self.logger = logger
    }

    /// Offers a live batch; false (the drop counted and logged) when the inbox is full or closed.
    @discardableResult
    package func offer(_ batch: EventBatch) -> Bool {
        if queue.offer(batch) { return true }
        let reason =
            EventQueue.byteCount(of: batch) > queue.maxBytes
            // It fits only into an empty queue, which a busy live stream rarely leaves.
            ? "a batch larger than delivery.max_queue_bytes arrived while the sink's queue held others; raise "
                + "max_queue_bytes if items this large must pass"
            : "the sink's queue is full (delivery.max_queue events or delivery.max_queue_bytes bytes)"
        dropped(batch.events.count, reason: reason)
        return false
    }

    /// Counts and logs (at most every 10 s, with the total) live events this sink drops.
    package func dropped(_ count: Int, reason: String) {
        guard count > 0 else { return }
        pipelineMetrics.dropped(count)
        counted(count, reason: reason, others: "the other sinks still get them")
    }

    /// Counts and logs live events every sink lost before they could be offered (`EventIntake.lost`); the reader
    /// counts them once in `directus_bridge_events_dropped_total`.
    package func lost(_ count: Int, reason: String) {
        guard count > 0 else { return }
        counted(count, reason: reason, others: "no sink gets them")
    }

    /// `others`: what became of the events for the other sinks, as the error line says it.
    private func counted(_ count: Int, reason: String, others: String) {
        if metrics.dropped(count) {
            logger.error(
                "dropping live events for this sink; \(others)",
                metadata: [
                    LogKey.sink: sinkID, LogKey.reason: reason, LogKey.count: count,
                    "dropped_total": metrics.droppedTotal,
                ])
        }
    }
}

/// Every sink's inbox, as the socket reader and the sort watcher see them: a batch goes to each sink's inbox,
/// and a full one drops it for that sink alone.
package final class SinkFanOut: EventIntake {
    /// The inboxes, one per sink, in `sinks` order.
    package let inboxes: [SinkInbox]

    /// Creates the fan-out over `inboxes`.
    package init(_ inboxes: [SinkInbox]) {
        self.inboxes = inboxes
    }

    /// Offers `batch` to every sink's inbox (never waits).
    public func offer(_ batch: EventBatch) {
        for inbox in inboxes { inbox.offer(batch) }
    }

    /// Counts and logs `count` live events lost for every sink.
    public func lost(_ count: Int, reason: String) {
        for inbox in inboxes { inbox.lost(count, reason: reason) }
    }

    /// Events waiting in the fullest inbox.
    package var depth: Int { inboxes.map(\.queue.depth).max() ?? 0 }

    /// Bytes waiting in the fullest inbox (``EventQueue/byteCount(of:)``).
    package var bytes: Int { inboxes.map(\.queue.bytes).max() ?? 0 }

    /// Closes every inbox: the runners drain what is queued and stop.
    package func close() {
        for inbox in inboxes { inbox.queue.close() }
    }
}
