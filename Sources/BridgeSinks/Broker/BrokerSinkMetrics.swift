internal import BridgeSystem
package import BridgeEvents

/// The metrics of one broker sink, labelled `sink="<sink id>"` (names prefixed `directus_bridge_broker_`).
package final class BrokerSinkMetrics: Sendable {
    /// Events the broker confirmed (JetStream acknowledgement, Kafka delivery report).
    package let delivered: Counter
    /// Confirmed events the broker already had (a re-sent event, deduplicated by JetStream's `Nats-Msg-Id`).
    package let duplicates: Counter
    /// Refusals for good (too large, an invalid subject or topic): each refused event becomes a dead letter.
    package let rejected: Counter
    /// Refused events stored as dead letters (`directus-bridge dlq`), logged at error level.
    package let deadLetters: Counter
    /// Events sent again after a failure (a closed connection, a fatal producer error, a refused credential).
    package let resent: Counter
    /// 1 while the client can deliver, 0 while it reports a problem (connection lost, credentials refused).
    package let healthy: Gauge

    private let registry: MetricsRegistry
    private let labels: [(String, String)]

    /// Registers the metrics of `sink`.
    package init(registry: MetricsRegistry, sink: String) {
        let labels = [("sink", sink)]
        self.registry = registry
        self.labels = labels
        delivered = registry.counter(
            "directus_bridge_broker_delivered_total", help: "Events the broker confirmed.", labels: labels)
        duplicates = registry.counter(
            "directus_bridge_broker_duplicates_total",
            help: "Confirmed events the broker already had (re-sent, stored once).", labels: labels)
        rejected = registry.counter(
            "directus_bridge_broker_rejected_total",
            help: "Events the broker refused for good (too large, invalid name); each becomes a dead letter.",
            labels: labels)
        deadLetters = registry.counter(
            "directus_bridge_broker_dead_letters_total",
            help: "Events the broker refused, stored as dead letters (directus-bridge dlq replay sends them again).",
            labels: labels)
        resent = registry.counter(
            "directus_bridge_broker_resent_total", help: "Events sent again after a failed delivery.", labels: labels)
        healthy = registry.gauge(
            "directus_bridge_broker_healthy",
            help: "1 while the broker client is connected, reports no problem and confirms within the stall time.",
            labels: labels)
    }

    /// Registers the gauge of events handed to the broker and not confirmed yet, read by `outstanding`.
    package func observeOutstanding(_ outstanding: @escaping @Sendable () -> Double) {
        registry.gaugeFunction(
            "directus_bridge_broker_outstanding", help: "Events handed to the broker and not confirmed yet.",
            labels: labels, read: outstanding)
    }
}
