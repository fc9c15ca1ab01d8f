/// Why the webhook delivery loop read its outbox back from SQLite in one turn (several causes may meet in one read).
/// In steady state no turn reads: the sink's rows arrive in memory through the hand-off.
package struct OutboxReadCause: OptionSet, Sendable, Hashable {
    package let rawValue: UInt8

    /// Creates a set of causes from its bits.
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The first turn: rows a crash or a stop left in the outbox.
    package static let start = OutboxReadCause(rawValue: 1 << 0)
    /// `WebhookDeliveryService.outboxChanged`: rows added other than through the hand-off.
    package static let outboxChanged = OutboxReadCause(rawValue: 1 << 1)
    /// The writer took letters `dlq replay` handed back into the outbox.
    package static let replays = OutboxReadCause(rawValue: 1 << 2)
    /// The poll interval passed (rows another process added, the depth recounted).
    package static let poll = OutboxReadCause(rawValue: 1 << 3)
    /// The hand-off refused a batch (full): rows are read by `seq` order until delivery caught up.
    package static let refused = OutboxReadCause(rawValue: 1 << 4)
    /// The previous read filled its batch (`loadBatch`): more rows wait.
    package static let moreRows = OutboxReadCause(rawValue: 1 << 5)
    /// Due rows whose bodies are not in memory (rows read from SQLite that the hand-off did not bring).
    package static let bodies = OutboxReadCause(rawValue: 1 << 6)

    /// Every cause with its name, in the order logs list them.
    package static let named: [(cause: OutboxReadCause, name: String)] = [
        (.start, "start"), (.outboxChanged, "outbox changed"), (.replays, "replays taken in"), (.poll, "poll"),
        (.refused, "hand-off refused a batch"), (.moreRows, "more rows"), (.bodies, "bodies not in memory"),
    ]

    /// The causes' names, comma-separated (the `reason` of the debug line of each read).
    package var names: String {
        Self.named.filter { contains($0.cause) }.map(\.name).joined(separator: ", ")
    }
}
