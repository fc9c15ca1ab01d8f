/// Where a running bridge finds the `resync` requests written beside it by the command, another process
/// (`ResyncRequestWatcher`): `cursor.db` with local state; the shared bucket with shared state, whose requests are
/// first moved into the subscription states, where the readers take them as from `cursor.db`.
package protocol ResyncRequestSource: Sendable {
    /// The subscriptions with a request no reader took yet, by sink id, among the sinks of `stores` (the term's).
    /// Blocks: call it on the blocking executor.
    func resyncRequests(stores: [String: CursorStore]) throws -> [String: Set<String>]
}

extension CursorDatabase: ResyncRequestSource {
    /// The command sets the flag in the file itself, for the sinks it names.
    package func resyncRequests(stores: [String: CursorStore]) throws -> [String: Set<String>] {
        try resyncRequestsBySink()
    }
}
