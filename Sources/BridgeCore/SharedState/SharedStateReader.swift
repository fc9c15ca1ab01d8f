package import BridgeNATS
internal import BridgeActivity
internal import BridgeJSON
internal import BridgeSinks
internal import BridgeSystem

/// ``StateReading`` of the shared bucket (`state.backend: jetstream`) for `status`: every sink's cursor and
/// subscription states, the webhook sinks' dead letters, pending resync requests, and who holds the lease. Reads
/// only; the outboxes are the bridges' own (their depth comes from the running service's metrics).
package struct SharedStateReader: StateReading {
    /// The bucket (nil: it does not exist yet).
    package var store: KeyValueStore?
    /// The keys of `state.name`.
    package var keys: SharedStateKeys
    /// `state.bucket`, for the report.
    package var bucket: String

    /// A reader of `store`.
    package init(store: KeyValueStore?, keys: SharedStateKeys, bucket: String) {
        self.store = store
        self.keys = keys
        self.bucket = bucket
    }

    package func read() throws -> StoredState {
        var state = StoredState()
        state.location = "the shared state"
        let place = "bucket \(bucket), name \(keys.name)"
        guard let store else {
            state.role = place + ": the bucket does not exist yet (no bridge has started)"
            return state
        }
        var resyncs: [String] = []
        for key in try store.keys() {
            if let uid = keys.uid(ofResyncKey: key) {
                resyncs.append(uid)
                continue
            }
            guard let sink = keys.sink(ofKey: key), let value = try store.entry(key)?.value else { continue }
            if key == keys.cursor(sink: sink) {
                state.sinkCursors[sink] = SharedCursorBackend.cursor(from: value)
            } else if let uid = keys.uid(ofSubscriptionKey: key, sink: sink) {
                state.subscriptions[sink, default: [:]][uid] = SharedCursorBackend.subscription(from: value)
            } else if keys.isDeadLetter(key), let (_, replay) = BucketDeadLetters.letter(from: value, revision: 0),
                !replay
            {
                state.deadLetters[sink, default: 0] += 1
            }
        }
        // A request not yet taken by an active bridge: every sink snapshots that subscription again.
        for uid in resyncs {
            for sink in state.sinkCursors.keys {
                state.subscriptions[sink, default: [:]][uid, default: SubscriptionCursorState(startID: 0)]
                    .resyncRequested = true
            }
        }
        state.role = place + ": " + Self.describeLease(try store.entry(keys.lease))
        return state
    }

    /// Who holds the lease, as its value says (holder and renewal time are the holder's own words, sanitized).
    package static func describeLease(_ entry: KeyValueEntry?) -> String {
        guard let entry, let value = entry.value else { return "reachable; the lease is free (no bridge active)" }
        let parsed = try? JSONValue.parse(value)
        let holder =
            parsed?["holder"]?.stringValue.map { PeerText.sanitized($0, maximumLength: 120) } ?? "an unknown holder"
        let renewed = parsed?["renewed"]?.stringValue.map { PeerText.sanitized($0, maximumLength: 120) } ?? "?"
        return "reachable; lease held by \(holder) (renewed \(renewed) by its clock, revision \(entry.revision))"
    }
}
