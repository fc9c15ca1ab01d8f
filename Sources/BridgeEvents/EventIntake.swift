/// Where live batches go (every sink's inbox): offered, never waited for — the socket reader must answer Directus's
/// pings whatever the sinks do, and a sink that cannot take a batch drops it for itself alone.
public protocol EventIntake: Sendable {
    /// Offers `batch` to every sink (never blocks).
    func offer(_ batch: EventBatch)

    /// Counts (`directus_bridge_sink_dropped_total{sink}`) and logs, for every sink, `count` live events lost before
    /// they could be offered: a socket message over the size limit, read past without its events being parsed, or an
    /// event item without its primary key (contract, "The delivery guarantee, per mode": every dropped event is counted
    /// and logged at error level).
    func lost(_ count: Int, reason: String)
}
