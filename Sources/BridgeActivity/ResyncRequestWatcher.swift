package import BridgeSystem

/// Hands `directus-bridge resync` requests written into `cursor.db` beside the running bridge to the readers of the
/// sinks they name, which act on them between reads (`ActivityReaderLoop.runRequestedResyncs`), or at once when a
/// snapshot of that subscription waits for its sink (`ActivityReaderLoop.waitSuperseding`): the contract gives a
/// running bridge 10 seconds. The command is another process and SQLite tells no one of a commit, so the file is
/// read every `interval` — one indexed query, on the blocking pool. With shared state the active bridge watches the
/// bucket instead (`SharedResyncRequest.mark`).
package struct ResyncRequestWatcher: Sendable {
    /// How often `cursor.db` is read for requests.
    package static let interval: Duration = .seconds(2)

    private let database: CursorDatabase
    private let readers: [String: ActivityReader]
    private let logger: Logger

    /// Watches `database` for the readers by sink id.
    package init(database: CursorDatabase, readers: [String: ActivityReader], logger: Logger) {
        self.database = database
        self.readers = readers
        self.logger = logger
    }

    /// Reads the requests every `interval` until `stop`.
    package func run(stop: ShutdownSignal) async {
        // A periodic read, the timer being the documented latency of `resync`: the request is written by another
        // process (the command), which has no way to ring this one.
        while await stop.sleep(for: Self.interval) {
            let requests: [String: Set<String>]
            do {
                requests = try await BlockingExecutor.shared.perform { try database.resyncRequestsBySink() }
            } catch {
                // The same file takes every cursor write, whose failures are logged and retried where they happen.
                logger.debug("cannot read resync requests from cursor.db", metadata: [LogKey.error: "\(error)"])
                continue
            }
            for (sink, uids) in requests { readers[sink]?.requestResync(uids) }
        }
    }
}
