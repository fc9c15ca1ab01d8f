package import BridgeSystem
package import BridgeEvents

extension LogKey {
    /// The delay before a webhook's next attempt.
    package static let retryDelay = "webhook.retry.delay"
}
