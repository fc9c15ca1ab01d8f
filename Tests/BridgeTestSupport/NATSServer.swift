import BridgeSystem
import Foundation

/// A real `nats-server` (Debian's package) with JetStream, started and stopped by a test on loopback ports.
///
/// It keeps its ports and store directory across `kill()`/`start()`, so a restarted node comes back as the same
/// server with its streams. The process is killed when the object goes away.
///
/// `start`, `kill`, `pause` and `cluster` wait on the server (its log, its exit, its threads' state): async tests
/// call their async forms, which wait on `BlockingExecutor.shared`. Waiting on the test runner's cooperative pool
/// (two threads on a 2-core machine) held every other test's task meanwhile.
public final class NATSServer: @unchecked Sendable {
    // @unchecked: used by one test task at a time; `process` changes only in start/stop/kill.
    public let name: String
    public let port: Int
    public let clusterPort: Int?
    public let directory: URL
    private var routes: [Int] = []
    private let authorization: String
    private var process: Process?
    private var serverPID: Int32?

    /// A server named `name` on a free port; `clustered` gives it a route port (set the routes with `cluster`).
    public init(name: String, in directory: URL, clustered: Bool = false, authorization: String = "") throws {
        self.name = name
        self.port = try freeLoopbackPort()
        self.clusterPort = clustered ? try freeLoopbackPort() : nil
        self.directory = directory.appendingPathComponent(name)
        self.authorization = authorization
        try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
    }

    /// Kills the server on `BlockingExecutor.shared`: the last reference often goes on the cooperative pool.
    deinit {
        let (process, serverPID) = (process, serverPID)
        BlockingExecutor.shared.submit { Self.kill(process, serverPID: serverPID) }
    }

    /// Debian installs nats-server in /usr/sbin, which a user's PATH may lack.
    public static let executable =
        ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"]
        .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "nats-server"

    /// `nats://127.0.0.1:<port>`.
    public var url: String { "nats://127.0.0.1:\(port)" }

    /// Three clustered servers routed to each other, started.
    public static func cluster(in directory: URL) throws -> [NATSServer] {
        let servers = try (1...3).map { try NATSServer(name: "n\($0)", in: directory, clustered: true) }
        for server in servers { server.routes = servers.filter { $0 !== server }.compactMap(\.clusterPort) }
        for server in servers { try server.start() }
        return servers
    }

    /// `cluster(in:)` on `BlockingExecutor.shared`, for async tests.
    public static func cluster(in directory: URL) async throws -> [NATSServer] {
        try await BlockingExecutor.shared.perform { try cluster(in: directory) }
    }

    /// `start()` on `BlockingExecutor.shared`, for async tests.
    public func start() async throws {
        try await BlockingExecutor.shared.perform { try self.start() }
    }

    /// `kill()` on `BlockingExecutor.shared`, for async tests.
    public func kill() async throws {
        try await BlockingExecutor.shared.perform { self.kill() }
    }

    /// `pause()` on `BlockingExecutor.shared`, for async tests.
    public func pause() async throws {
        try await BlockingExecutor.shared.perform { self.pause() }
    }

    /// Starts the server and waits until it listens on its ports (30 s, stretched by `TestEnvironment.patience`).
    public func start() throws {
        var config = """
            server_name: \(name)
            listen: 127.0.0.1:\(port)
            jetstream { store_dir: "\(directory.path)/store", max_memory_store: 256MB, max_file_store: 2GB }
            \(authorization)

            """
        if let clusterPort {
            let routeList = routes.map { "\"nats-route://127.0.0.1:\($0)\"" }.joined(separator: ", ")
            config += "cluster { name: bridge-test, listen: 127.0.0.1:\(clusterPort), routes: [\(routeList)] }\n"
        }
        let configFile = directory.appendingPathComponent("server.conf")
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        let logFile = directory.appendingPathComponent("server.log")
        let logStart = BrokerServerLog.size(of: logFile)
        // Through nats_server.py: the server dies with the test process, however the test run ended.
        let server = try WatchedServer.start(
            name: "nats-server \(name)",
            executable: Self.executable,
            arguments: ["-c", configFile.path, "-l", logFile.path]
        )
        self.process = server.process
        serverPID = server.pid
        let process = server.process
        // Ready when its own log (this run's part) says it listens on its ports: a connection that succeeds proves
        // nothing when another process took the port before the server could bind it (the server exits, and the
        // connection reached the other process). A clustered node can take long on a loaded machine (30 s passed
        // under ThreadSanitizer).
        let listening =
            ["Listening for client connections on 127.0.0.1:\(port)"]
            + (clusterPort.map { ["Listening for route connections on 127.0.0.1:\($0)"] } ?? [])
        let deadline = ContinuousClock.now + .seconds(TestEnvironment.patient(30))
        while ContinuousClock.now < deadline {
            if !process.isRunning { throw NATSServerError.exited(name: name, log: log) }
            let written = BrokerServerLog.text(of: logFile, from: logStart)
            if listening.allSatisfy(written.contains) { return }
            usleep(50_000)
        }
        throw NATSServerError.exited(name: name, log: log)
    }

    /// SIGKILLs the server (no goodbye to clients or peers) and waits for it.
    public func kill() {
        Self.kill(process, serverPID: serverPID)
        process = nil
        serverPID = nil
    }

    private static func kill(_ process: Process?, serverPID: Int32?) {
        guard let process else { return }
        // The server itself, not its watchdog: a crash as the clients see it. The watchdog exits with it.
        if let serverPID { Foundation.kill(serverPID, SIGKILL) }
        ChildExit.wait(process)
    }

    /// Freezes the server (SIGSTOP): connections stay open, nothing is answered. `resume()` thaws it.
    ///
    /// Returns once every thread of the server is stopped (or after 10 s, stretched): `kill` only queues the stop,
    /// and each of the server's threads stops at its next return to user space, so on a loaded machine a thread
    /// could still answer a publish made right after `kill` returned.
    public func pause() {
        guard let serverPID else { return }
        Foundation.kill(serverPID, SIGSTOP)
        let deadline = ContinuousClock.now + .seconds(TestEnvironment.patient(10))
        while !isStopped && ContinuousClock.now < deadline { usleep(2_000) }
    }

    /// Whether every thread of the server is stopped (state `T` in /proc), for `pause` and failure messages.
    public var isStopped: Bool {
        guard let serverPID else { return false }
        let tasks = "/proc/\(serverPID)/task"
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: tasks), !threads.isEmpty else {
            return false
        }
        return threads.allSatisfy { thread in
            // procfs reports a size of 0: read to the end.
            let data = try? FileHandle(forReadingFrom: URL(fileURLWithPath: "\(tasks)/\(thread)/stat")).readToEnd()
            return ChildExit.processState(inStat: String(decoding: (data ?? nil) ?? Data(), as: UTF8.self)) == "T"
        }
    }

    /// Lets a paused server run again (SIGCONT).
    public func resume() {
        if let serverPID { Foundation.kill(serverPID, SIGCONT) }
    }

    /// The server's log file, for failure messages.
    public var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)).map {
            String($0.suffix(3000))
        } ?? ""
    }
}

/// Why a test server could not be used.
public enum NATSServerError: Error, CustomStringConvertible {
    case exited(name: String, log: String)

    public var description: String {
        switch self {
        case .exited(let name, let log): "nats-server \(name) did not start: \(log)"
        }
    }
}

/// Runs Tests/tools/broker_peers/nats_admin.py with `arguments`, off the cooperative pool.
public func natsAdmin(_ arguments: [String]) async throws -> PythonTool.Result {
    try await BlockingExecutor.shared.perform {
        try PythonTool.run(script: "broker_peers/nats_admin.py", arguments: arguments, timeout: 120)
    }
}
