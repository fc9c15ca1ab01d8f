package import BridgeNATS

/// The keys of one bridge name in the shared bucket (docs/ARCHITECTURE.md "Shared state, lease and fencing"). Sink
/// ids and subscription uids are encoded (`KeyValueKey.token`) so any text gives one valid key token.
package struct SharedStateKeys: Sendable, Equatable {
    /// The bridge name (`state.name`), already a valid token.
    package let name: String

    /// Keys of bridges named `name`.
    package init(name: String) { self.name = name }

    /// `<name>.lease`: the active bridge's holder id and renewal time.
    package var lease: String { name + ".lease" }

    /// `<name>.sink.<sink>.cursor`: the sink's committed activity id and resolved ranges above it.
    package func cursor(sink: String) -> String { name + ".sink." + KeyValueKey.token(sink) + ".cursor" }

    /// `<name>.sink.<sink>.sub.<uid>`: the subscription's start id, snapshot watermark and flags for that sink.
    package func subscription(sink: String, uid: String) -> String {
        name + ".sink." + KeyValueKey.token(sink) + ".sub." + KeyValueKey.token(uid)
    }

    /// The prefix of every subscription key of `sink`.
    package func subscriptionPrefix(sink: String) -> String { name + ".sink." + KeyValueKey.token(sink) + ".sub." }

    /// The uid a subscription key of `sink` encodes, or nil when `key` is not one.
    package func uid(ofSubscriptionKey key: String, sink: String) -> String? {
        let prefix = subscriptionPrefix(sink: sink)
        guard key.hasPrefix(prefix) else { return nil }
        return KeyValueKey.decodeToken(String(key.dropFirst(prefix.count)))
    }
}
