/// Where live batches go (every sink's inbox): offered, never waited for — the socket reader must answer Directus's
/// pings whatever the sinks do, and a sink that cannot take a batch drops it for itself alone.
public protocol EventIntake: Sendable {
    /// Offers `batch` to every sink (never blocks).
    func offer(_ batch: EventBatch)
}
