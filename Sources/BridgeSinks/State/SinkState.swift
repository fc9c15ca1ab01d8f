package import BridgeSystem

/// The state backend as the sinks see it (`state.backend`, docs/ARCHITECTURE.md "State backend"): where a sink files
/// the events it gives up on, and whether events it keeps on this machine hold the activity cursor back. The runtime
/// picks the implementation once (`StateBackends.make`): `LocalSinkState` (`<state_dir>/webhooks.db`) or
/// `SharedSinkState` (the shared bucket); a sink asks it and never tests which one it got.
package protocol SinkState: Sendable {
    /// Whether a sink that keeps events on this machine before it delivers them (the webhook outbox) lets the cursor
    /// move only once they were answered: with shared state a failover to another machine must lose nothing that sat
    /// in this machine's outbox.
    var progressWaitsForDelivery: Bool { get }
    /// The dead letters of broker sink `sink`; `outbox` is `<state_dir>/webhooks.db`, which keeps what the backend
    /// cannot hold itself.
    func brokerDeadLetters(sink: String, outbox: OutboxStore, logger: Logger) -> any BrokerDeadLetters
    /// Where webhook sink `sink` files its dead letters, beside its outbox rows.
    func webhookDeadLetters(sink: String, logger: Logger) -> any WebhookDeadLetterPlace
}

/// `state.backend: local`: dead letters in the `dead_letters` table of `<state_dir>/webhooks.db`, which
/// `dlq replay` writes back into the outbox directly; the cursor moves once the outbox is on disk.
package struct LocalSinkState: SinkState {
    /// The local state.
    package init() {}

    package var progressWaitsForDelivery: Bool { false }

    package func brokerDeadLetters(sink: String, outbox: OutboxStore, logger: Logger) -> any BrokerDeadLetters {
        LocalBrokerDeadLetters(store: outbox, sink: sink)
    }

    package func webhookDeadLetters(sink: String, logger: Logger) -> any WebhookDeadLetterPlace {
        LocalWebhookDeadLetters()
    }
}
