internal import BridgeNATS
internal import BridgeSystem
internal import Synchronization

extension SharedCursorBackend: ResyncRequestSource {
    /// A `resync` written into the bucket during the term (`SharedResyncRequest`): when `<name>.resync` moved since
    /// the requests were last taken, each `<name>.resync.<uid>` is moved into the subscription's state of every sink
    /// it names among `stores` (`CursorStore.recordResyncRequest`: fenced, under the store's lock), then deleted, as
    /// the takeover does — a crash in between repeats the request rather than losing it; a request rewritten
    /// meanwhile stays for the next round. Returns every request recorded in the states and not taken yet.
    ///
    /// The term goes on: its readers take the requests as with local state, within the contract's 10 seconds whatever
    /// the sinks do (a new term for each would first wait up to `shutdown_timeout` for sinks that take nothing).
    package func resyncRequests(stores: [String: CursorStore]) throws -> [String: Set<String>] {
        let mark = try SharedResyncRequest.mark(in: store, keys: keys)
        if mark != state.withLock({ $0.resyncMark }) {
            for key in try store.keys() {
                guard let uid = keys.uid(ofResyncKey: key), let request = try store.entry(key),
                    let value = request.value
                else { continue }
                let named = SharedResyncRequest.sinks(of: value)
                for (sink, cursors) in stores.sorted(by: { $0.key < $1.key }) where named?.contains(sink) ?? true {
                    try cursors.recordResyncRequest(uid)
                }
                _ = try store.change(key) { $0?.revision == request.revision ? .delete : nil }
                logger.info(
                    "resync requested in the shared state: handed to the sinks' readers",
                    metadata: [LogKey.subscriptionUID: uid]
                )
            }
            state.withLock { $0.resyncMark = mark }
        }
        let loaded = state.withLock { $0.loaded }
        return loaded.compactMapValues { progress in
            let requested = Set(progress.subscriptions.filter(\.value.resyncRequested).keys)
            return requested.isEmpty ? nil : requested
        }
    }
}
