package import BridgeNATS
internal import BridgeJSON
internal import BridgeSystem

/// `directus-bridge resync` with shared state (docs/ARCHITECTURE.md "Shared state, lease and fencing"): the request
/// is a key of its own, `<name>.resync.<uid>`, written by the command beside the bridges — never the subscription
/// states, which only the active bridge writes, under fencing. The active bridge, which sees `<name>.resync` move,
/// moves it into the subscription's state for every sink it names and deletes it within its term
/// (`SharedCursorBackend.resyncRequests(stores:)`); with none active, the next takeover (`takeOver`) does.
package enum SharedResyncRequest {
    /// Records a request to snapshot subscription `uid` again, for `sinks` only when given (an earlier one still
    /// waiting is replaced), then moves `<name>.resync`, which the active bridge watches (`mark`). Blocks.
    package static func record(uid: String, sinks: [String]? = nil, in store: KeyValueStore, keys: SharedStateKeys)
        throws
    {
        let requested: JSONValue = .string(Timestamp.now().rfc3339)
        let value: JSONValue =
            if let sinks { ["requested": requested, "sinks": .array(sinks.map(JSONValue.string))] } else {
                ["requested": requested]
            }
        _ = try store.change(keys.resyncRequest(uid: uid)) { _ in .put(value.serialized()) }
        _ = try store.change(keys.resyncRequested) { _ in .put(value.serialized()) }
    }

    /// The sinks a recorded request names, or nil for every sink (also for a request an older bridge wrote).
    package static func sinks(of request: [UInt8]) -> Set<String>? {
        guard let value = try? JSONValue.parse(request), case .array(let sinks)? = value["sinks"] else { return nil }
        return Set(sinks.compactMap(\.stringValue))
    }

    /// The revision of `<name>.resync` (0: never moved): the active bridge takes the requests when it moved since
    /// it last looked. Blocks.
    package static func mark(in store: KeyValueStore, keys: SharedStateKeys) throws -> UInt64 {
        try store.entry(keys.resyncRequested)?.revision ?? 0
    }
}
