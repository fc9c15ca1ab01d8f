import BridgeNATS
import BridgeTestSupport

/// A nats-server of its own (random loopback port) with one key-value bucket, for the shared-state tests.
struct TestBucket {
    let server: NATSServer
    let connection: NATSConnection
    let store: KeyValueStore

    /// Starts the server and creates bucket `name` (also the server's name and directory prefix).
    static func start(_ name: String) async throws -> TestBucket {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "shared-\(name)")
        let server = try NATSServer(name: name, in: directory)
        try await server.start()
        let connection = try await NATSConnection.connect(
            settings: NATSSettings(servers: [server.url]), logger: .silent)
        let store = try await KeyValueStore.open(connection: connection, settings: KeyValueSettings(bucket: name))
        return TestBucket(server: server, connection: connection, store: store)
    }

    /// Closes the connection; the server stops with the last reference to it.
    func close() async { await connection.close() }
}
