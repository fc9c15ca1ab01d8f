internal import BridgeSystem

/// Where a webhook sink's delivery service files the dead letters of its outbox (`SinkState.webhookDeadLetters`):
/// the `dead_letters` table beside the outbox (`LocalWebhookDeadLetters`), or the shared bucket
/// (`SharedDeadLetterFiler`). The service calls it on its own thread; calls may block.
package protocol WebhookDeadLetterPlace: Sendable {
    /// At each poll: the letters `dlq replay` handed back outside the outbox, put into it (`requeue`); returns how
    /// many. Throws when they cannot be read: the service logs it and tries at the next poll.
    func takeInReplays(into store: OutboxStore, now: Int64) throws -> Int
    /// Before a commit: files the commit's dead letters (`.deadLetter` writes of `sink`'s rows in `store`) outside
    /// the outbox, turning each filed one into `.removed`. Throws when they cannot be filed: the commit waits.
    func file(_ writes: inout [OutboxWrite], from store: OutboxStore, sink: String) throws
    /// After a store step: the dead-letter gauge, from the step's count (nil when it did not count) and the writes
    /// it committed (empty when it committed none).
    func count(into depths: WebhookDepths, stepCount: Int?, committed writes: [OutboxWrite])
    /// The error line logged when a turn fails with `error` (once, until a turn succeeds).
    func failureMessage(for error: any Error) -> String
}

/// `state.backend: local`: the commit itself moves dead letters into the `dead_letters` table of `webhooks.db`, and
/// `dlq replay` writes the outbox directly: nothing to take in, nothing to file before.
package struct LocalWebhookDeadLetters: WebhookDeadLetterPlace {
    /// The local place.
    package init() {}

    package func takeInReplays(into store: OutboxStore, now: Int64) throws -> Int { 0 }

    package func file(_ writes: inout [OutboxWrite], from store: OutboxStore, sink: String) throws {}

    package func count(into depths: WebhookDepths, stepCount: Int?, committed writes: [OutboxWrite]) {
        if let stepCount {
            depths.deadLetters = stepCount
        } else {
            depths.addDeadLetters(writes.count { $0.isDeadLetter })
        }
    }

    package func failureMessage(for error: any Error) -> String { "webhook outbox failed; retrying" }
}
