/// The keys of one bridge name in the shared bucket (docs/ARCHITECTURE.md "Shared state, lease and fencing"). Sink
/// ids, subscription uids and event ids are encoded (`KeyValueKey.token`) so any text gives one valid key token.
///
/// Here rather than beside the lease and cursors: the activity layer (cursors, lease), the sinks (webhook dead
/// letters) and the commands all name these keys, and this is the lowest layer they share.
package struct SharedStateKeys: Sendable, Equatable {
    /// The bridge name (`state.name`), already a valid token.
    package let name: String

    /// Keys of bridges named `name`.
    package init(name: String) { self.name = name }

    /// `<name>.lease`: the active bridge's holder id and renewal time.
    package var lease: String { name + ".lease" }

    /// `<name>.dlq`: moved by `dlq replay` and `dlq purge`, so that the active bridge reads the dead letters again.
    package var deadLettersChanged: String { name + ".dlq" }

    /// `<name>.resync`: moved by `resync` after it wrote a request, so that the active bridge takes it
    /// (`SharedCursorBackend.resyncRequests(stores:)`).
    package var resyncRequested: String { name + ".resync" }

    /// `<name>.resync.<uid>`: a `resync` request, acted on by the next takeover.
    package func resyncRequest(uid: String) -> String { name + ".resync." + KeyValueKey.token(uid) }

    /// The uid a resync request key names, or nil when `key` is not one.
    package func uid(ofResyncKey key: String) -> String? { decodedLastToken(of: key, prefix: name + ".resync.") }

    /// `<name>.sink.<sink>.cursor`: the sink's committed activity id and resolved ranges above it.
    package func cursor(sink: String) -> String { sinkPrefix(sink) + "cursor" }

    /// `<name>.sink.<sink>.sub.<uid>`: the subscription's start id, snapshot watermark and flags for that sink.
    package func subscription(sink: String, uid: String) -> String {
        subscriptionPrefix(sink: sink) + KeyValueKey.token(uid)
    }

    /// The prefix of every subscription key of `sink`.
    package func subscriptionPrefix(sink: String) -> String { sinkPrefix(sink) + "sub." }

    /// The uid a subscription key of `sink` encodes, or nil when `key` is not one.
    package func uid(ofSubscriptionKey key: String, sink: String) -> String? {
        decodedLastToken(of: key, prefix: subscriptionPrefix(sink: sink))
    }

    /// `<name>.sink.<sink>.journal`: the dead letters a webhook sink is filing, written (fenced) before they are
    /// filed under their own keys, so that a bridge that lost the shared state can write none.
    package func deadLetterJournal(sink: String) -> String { sinkPrefix(sink) + "journal" }

    /// What a dead-letter journal holds while no letter is being filed.
    package static let emptyJournal = Array("{}".utf8)

    /// `<name>.sink.<sink>.dead.<event id>`: one dead letter of a webhook sink.
    package func deadLetter(sink: String, eventID: String) -> String {
        sinkPrefix(sink) + "dead." + KeyValueKey.token(eventID)
    }

    /// The prefix of every dead-letter key of `sink`.
    package func deadLetterPrefix(sink: String) -> String { sinkPrefix(sink) + "dead." }

    /// Whether `key` is a dead letter of any sink of this name.
    package func isDeadLetter(_ key: String) -> Bool {
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 5 && parts[0] == name && parts[1] == "sink" && parts[3] == "dead"
    }

    /// The sink id a key of this name's sinks names, or nil when `key` is not a sink's key.
    package func sink(ofKey key: String) -> String? {
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0] == name, parts[1] == "sink" else { return nil }
        return KeyValueKey.decodeToken(String(parts[2]))
    }

    private func sinkPrefix(_ sink: String) -> String { name + ".sink." + KeyValueKey.token(sink) + "." }

    private func decodedLastToken(of key: String, prefix: String) -> String? {
        guard key.hasPrefix(prefix) else { return nil }
        let rest = key.dropFirst(prefix.count)
        guard !rest.contains(".") else { return nil }
        return KeyValueKey.decodeToken(String(rest))
    }
}
