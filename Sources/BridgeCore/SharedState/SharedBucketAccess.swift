package import BridgeConfig
package import BridgeNATS
package import BridgeSystem

/// How the commands beside the bridges (`check`, `status`, `dlq`, `resync`) reach the shared bucket of
/// `state.backend: jetstream`: connect to `state.servers`, bind the bucket without ever creating it, do the work on
/// the blocking executor, close.
package enum SharedBucketAccess {
    /// No state server could be reached.
    package struct Unreachable: Error, CustomStringConvertible {
        /// `state.servers` as they may be shown (credentials in a URL redacted).
        package var servers: String
        /// The connection's error.
        package var error: any Error

        /// `cannot connect to <servers>: <error>`.
        package var description: String { "cannot connect to \(servers): \(error)" }
    }

    /// Runs `body` with the bucket of `state` (nil when it does not exist yet: no bridge has started) and the keys of
    /// `state.name`. Throws `Unreachable`, the bucket's error (a `NATSError`), or `body`'s.
    package static func withBucket<T: Sendable>(
        _ state: StateConfig, client: String, logger: Logger,
        _ body: @escaping @Sendable (KeyValueStore?, SharedStateKeys) throws -> T
    ) async throws -> T {
        let connection: NATSConnection
        do {
            connection = try await NATSConnection.connect(
                settings: NATSSettings(servers: state.servers, name: client), logger: logger)
        } catch {
            throw Unreachable(servers: state.shownServers, error: error)
        }
        var settings = KeyValueSettings(bucket: state.bucket)
        settings.createIfMissing = false
        let keys = SharedStateKeys(name: state.name)
        let result: Result<T, any Error>
        do {
            let store: KeyValueStore?
            do {
                store = try await KeyValueStore.open(connection: connection, settings: settings)
            } catch let error as NATSError where error.isNotFound {
                store = nil
            }
            result = .success(try await BlockingExecutor.shared.perform { try body(store, keys) })
        } catch {
            result = .failure(error)
        }
        await connection.close()
        return try result.get()
    }
}
