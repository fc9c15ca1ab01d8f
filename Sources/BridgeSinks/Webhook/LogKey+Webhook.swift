package import BridgeSystem
internal import BridgeEvents

extension LogKey {
    /// The delay before a webhook's next attempt.
    package static let retryDelay = "webhook.retry.delay"
    /// Bodies a webhook delivery read back from its outbox in one read (debug level).
    package static let outboxBodiesRead = "webhook.outbox.bodies_read"
}
