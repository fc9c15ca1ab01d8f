package import BridgeSystem

/// Hands `directus-bridge resync` requests written beside the running bridge (into `cursor.db`, or into the shared
/// bucket: `ResyncRequestSource`) to the readers of the sinks they name, which act on them between reads
/// (`ActivityReaderLoop.runRequestedResyncs`), or at once while they wait for their sink
/// (`ActivityReaderLoop.waitTakingResyncs`): the contract gives a running bridge 10 seconds. The command is another
/// process, which has no way to ring this one, so the source is read every `interval`, on the blocking pool.
package struct ResyncRequestWatcher: Sendable {
    /// How often the source is read for requests.
    package static let interval: Duration = .seconds(2)

    private let source: any ResyncRequestSource
    private let readers: [String: ActivityReader]
    private let stores: [String: CursorStore]
    private let logger: Logger

    /// Watches `source` for the readers by sink id (their cursor stores, `stores`, take the shared state's requests).
    package init(
        source: any ResyncRequestSource,
        readers: [String: ActivityReader],
        stores: [String: CursorStore],
        logger: Logger
    ) {
        self.source = source
        self.readers = readers
        self.stores = stores
        self.logger = logger
    }

    /// Reads the requests every `interval` until `stop`.
    package func run(stop: ShutdownSignal) async {
        // A periodic read, the timer being the documented latency of `resync`. Only a watch of the bucket's key
        // (NATS's `kvStore_Watch`) could ring here with shared state, and `KeyValueStore` has none: it would need a
        // thread of its own and its own reconnect handling, for one read every 2 s against the 10 s.
        while await stop.sleep(for: Self.interval) {
            let requests: [String: Set<String>]
            do {
                requests = try await BlockingExecutor.shared.perform { [source, stores] in
                    try source.resyncRequests(stores: stores)
                }
            } catch {
                // The same file or bucket takes every cursor write, whose failures are logged (a lost fence ends the
                // term) and retried where they happen.
                logger.debug("cannot read resync requests", metadata: [LogKey.error: "\(error)"])
                continue
            }
            for (sink, uids) in requests { readers[sink]?.requestResync(uids) }
        }
    }
}
