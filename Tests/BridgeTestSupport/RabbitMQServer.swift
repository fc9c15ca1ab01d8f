import BridgeSystem
import Foundation

/// A real `rabbitmq-server` (Debian's package), started by a test on free loopback ports with its own node name,
/// Mnesia and log directories in a temporary directory, plain and (with `tls`) TLS listeners.
///
/// RabbitMQ takes many seconds to start: a suite starts one and shares it (`shared`), each test with its own
/// exchange and queue. It keeps its ports and data across `stop()`/`start()`. The node is stopped (SIGKILL of the
/// Erlang VM) when the object goes away.
public final class RabbitMQServer: @unchecked Sendable {
    // @unchecked: `server` changes only in start/stop, which one test calls at a time.
    public let port: Int
    /// The TLS listener's port (0 without TLS).
    public let tlsPort: Int
    public let directory: URL
    public let certificates: TestCertificates?
    private let distributionPort: Int
    private var server: WatchedServer?

    /// A node on free ports in `directory`; `tls` adds a TLS listener with a generated CA.
    public init(in directory: URL, tls: Bool = false) throws {
        self.port = try freeLoopbackPort()
        self.tlsPort = tls ? try freeLoopbackPort() : 0
        self.distributionPort = try freeLoopbackPort()
        self.directory = directory
        self.certificates = tls ? try TestCertificates(in: directory.appendingPathComponent("certs")) : nil
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Stops the node on `BlockingExecutor.shared`: the last reference often goes on the cooperative pool, where
    /// waiting for the exit would hold one of its two threads (`NATSServer`).
    deinit {
        let (server, directory) = (server, directory)
        BlockingExecutor.shared.submit { Self.stop(server, directory: directory) }
    }

    /// `amqp://guest:guest@127.0.0.1:<port>` (or the given credentials), or `amqps://…` on the TLS port.
    public func url(credentials: String = "guest:guest", tls: Bool = false) -> String {
        tls ? "amqps://\(credentials)@127.0.0.1:\(tlsPort)" : "amqp://\(credentials)@127.0.0.1:\(port)"
    }

    /// The node's name: unique per test server.
    public var nodeName: String { "bridge-test-\(port)@localhost" }

    /// `start()` on `BlockingExecutor.shared`, for async tests (`NATSServer`).
    public func start() async throws {
        try await BlockingExecutor.shared.perform { try self.start() }
    }

    /// `stop()` on `BlockingExecutor.shared`, for async tests.
    public func stop() async throws {
        try await BlockingExecutor.shared.perform { self.stop() }
    }

    /// Starts the node and waits until it says the broker started (120 s, stretched by the patience).
    public func start() throws {
        var config = "listeners.tcp.default = 127.0.0.1:\(port)\n"
        if let certificates {
            config += """
                listeners.ssl.default = 127.0.0.1:\(tlsPort)
                ssl_options.cacertfile = \(certificates.ca)
                ssl_options.certfile = \(certificates.cert)
                ssl_options.keyfile = \(certificates.key)
                ssl_options.verify = verify_none
                ssl_options.fail_if_no_peer_cert = false

                """
        }
        try config.write(to: directory.appendingPathComponent("rabbitmq.conf"), atomically: true, encoding: .utf8)
        try "[].".write(to: directory.appendingPathComponent("enabled_plugins"), atomically: true, encoding: .utf8)
        let output = directory.appendingPathComponent("server.out")
        if !FileManager.default.fileExists(atPath: output.path) {
            FileManager.default.createFile(atPath: output.path, contents: nil)
        }
        let outputHandle = try FileHandle(forWritingTo: output)
        try outputHandle.seekToEnd()
        defer { try? outputHandle.close() }
        let logFile = directory.appendingPathComponent("log/\(nodeName).log")
        let logStart = BrokerServerLog.size(of: logFile)
        let server = try WatchedServer.start(
            name: "rabbitmq-server",
            executable: "/usr/lib/rabbitmq/bin/rabbitmq-server",
            arguments: [],
            environment: TestEnvironment.helperEnvironment([
                "HOME": directory.path,
                "RABBITMQ_NODENAME": nodeName,
                "RABBITMQ_DIST_PORT": String(distributionPort),
                "RABBITMQ_MNESIA_BASE": directory.appendingPathComponent("mnesia").path,
                "RABBITMQ_LOG_BASE": directory.appendingPathComponent("log").path,
                "RABBITMQ_CONFIG_FILE": directory.appendingPathComponent("rabbitmq.conf").path,
                "RABBITMQ_ENABLED_PLUGINS_FILE": directory.appendingPathComponent("enabled_plugins").path,
                "RABBITMQ_PID_FILE": directory.appendingPathComponent("node.pid").path,
            ]),
            directory: directory,
            standardError: outputHandle
        )
        self.server = server
        // This start's part of the node's log says when the broker is up (a restart appends to the same file).
        try server.waitUntil(name: "rabbitmq-server", seconds: 120, log: { log }) {
            BrokerServerLog.text(of: logFile, from: logStart).contains("Server startup complete")
        }
    }

    /// Stops the node as a crash would (SIGKILL of the script's process group: the Erlang VM and its helpers) and
    /// waits for it; epmd, shared by every node on the machine, stays.
    public func stop() {
        Self.stop(server, directory: directory)
        server = nil
    }

    private static func stop(_ server: WatchedServer?, directory: URL) {
        guard let server else { return }
        // The VM is the script's child (exec'd); kill it by its pid file too, in case it was re-parented.
        if let vm = vmPID(in: directory) { Foundation.kill(vm, SIGKILL) }
        server.stop(signal: SIGKILL)
    }

    /// Freezes the node (SIGSTOP of the Erlang VM): connections stay open, nothing is read, confirmed or sent, no
    /// heartbeat either (a hung broker). `resume()` thaws it.
    public func pause() {
        if let vm = Self.vmPID(in: directory) { Foundation.kill(vm, SIGSTOP) }
    }

    /// Thaws a node `pause()` froze.
    public func resume() {
        if let vm = Self.vmPID(in: directory) { Foundation.kill(vm, SIGCONT) }
    }

    /// The Erlang VM's pid, from the pid file of the node in `directory`.
    private static func vmPID(in directory: URL) -> Int32? {
        (try? String(contentsOf: directory.appendingPathComponent("node.pid"), encoding: .utf8))
            .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// The node's log, for failure messages.
    public var log: String { BrokerServerLog.tail(of: directory.appendingPathComponent("log/\(nodeName).log")) }
}
