import BridgeSystem

extension LogKey {
    /// The delay before a webhook's next attempt.
    static let retryDelay = "webhook.retry.delay"
}
