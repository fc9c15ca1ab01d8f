import BridgeSystem
import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A broker server on a free loopback port for a benchmark (nats-server with JetStream, redis-server in memory,
/// mosquitto, rabbitmq-server), its output in a log file of its own directory, ready when the log says so.
struct BenchServer {
    let process: Process
    /// The process whose CPU time is the server's: `process`, or the Erlang VM that rabbitmq-server (a script) runs.
    var serverPID: Int32
    let url: String
    let port: Int
    let directory: URL

    /// nats-server with JetStream, its store in the server's directory.
    static func nats() throws -> BenchServer {
        try start(
            name: "nats-server", executables: ["/usr/sbin/nats-server", "/usr/bin/nats-server"], scheme: "nats",
            ready: "Server is ready"
        ) { port, directory in ["-a", "127.0.0.1", "-p", "\(port)", "-js", "-sd", directory.path] }
    }

    /// redis-server keeping its data in memory only (no snapshot, no append-only file): the benchmark measures the
    /// clients, not the disk.
    static func redis() throws -> BenchServer {
        try start(
            name: "redis-server", executables: ["/usr/bin/redis-server"], scheme: "redis",
            ready: "Ready to accept connections"
        ) { port, directory in
            [
                "--bind", "127.0.0.1", "--port", "\(port)", "--dir", directory.path, "--save", "",
                "--appendonly", "no", "--protected-mode", "no",
            ]
        }
    }

    /// mosquitto, anonymous, without persistence (nothing subscribes, so nothing is kept), logging to stderr (its
    /// stdout is block-buffered into the log file: the readiness line would never arrive).
    static func mosquitto() throws -> BenchServer {
        try start(
            name: "mosquitto", executables: ["/usr/sbin/mosquitto"], scheme: "mqtt", ready: "listen socket on port"
        ) { port, directory in
            // `user root`: started as root, mosquitto would switch to its own user.
            let config = directory.appendingPathComponent("mosquitto.conf")
            try """
            user root
            listener \(port) 127.0.0.1
            allow_anonymous true
            persistence false
            log_dest stderr
            log_type error
            log_type notice
            log_type information

            """.write(to: config, atomically: true, encoding: .utf8)
            return ["-c", config.path]
        }
    }

    /// rabbitmq-server as the tests start it (Tests/BridgeTestSupport/RabbitMQServer.swift): a node of its own name,
    /// with its Mnesia directory, config and pid file in the server's directory, its listener on the free port and
    /// no plugins; its log on stdout. Logs in as guest/guest (allowed from loopback).
    static func rabbitmq() throws -> BenchServer {
        var server = try start(
            name: "rabbitmq-server", executables: ["/usr/lib/rabbitmq/bin/rabbitmq-server"], scheme: "amqp",
            ready: "Server startup complete", readyWithin: .seconds(120)
        ) { port, directory in
            try "listeners.tcp.default = 127.0.0.1:\(port)\n".write(
                to: directory.appendingPathComponent("rabbitmq.conf"), atomically: true, encoding: .utf8)
            try "[].".write(
                to: directory.appendingPathComponent("enabled_plugins"), atomically: true, encoding: .utf8)
            return []
        } environment: { port, directory in
            [
                "HOME": directory.path,
                "RABBITMQ_NODENAME": "bridge-bench-\(port)@localhost",
                "RABBITMQ_DIST_PORT": String(try freePort()),
                "RABBITMQ_MNESIA_BASE": directory.appendingPathComponent("mnesia").path,
                "RABBITMQ_LOGS": "-",
                "RABBITMQ_CONFIG_FILE": directory.appendingPathComponent("rabbitmq.conf").path,
                "RABBITMQ_ENABLED_PLUGINS_FILE": directory.appendingPathComponent("enabled_plugins").path,
                "RABBITMQ_PID_FILE": directory.appendingPathComponent("node.pid").path,
            ]
        }
        // The node's pid file is written early in its boot, well before "Server startup complete".
        let vm = try? String(contentsOf: server.directory.appendingPathComponent("node.pid"), encoding: .utf8)
        guard let vm = vm.flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) else {
            server.stop()
            throw BenchmarkError(message: "rabbitmq-server wrote no node.pid in \(server.directory.path)")
        }
        server.serverPID = vm
        return server
    }

    private static func start(
        name: String,
        executables: [String],
        scheme: String,
        ready: String,
        readyWithin timeout: Duration = .seconds(10),
        arguments: (Int, URL) throws -> [String],
        environment: (Int, URL) throws -> [String: String] = { _, _ in [:] }
    ) throws -> BenchServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(name)-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let port = try freePort()
        let process = Process()
        // Debian installs nats-server in /usr/sbin.
        process.executableURL = URL(
            fileURLWithPath: executables.first { FileManager.default.isExecutableFile(atPath: $0) } ?? executables[0]
        )
        process.arguments = try arguments(port, directory)
        process.environment = ProcessInfo.processInfo.environment.merging(try environment(port, directory)) { $1 }
        let log = directory.appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        process.standardOutput = logHandle
        process.standardError = logHandle
        let watch = try FileWatch(path: log.path)
        try process.run()
        let isReady = watch.wait(timeout: timeout) {
            (try? String(contentsOf: log, encoding: .utf8))?.contains(ready) ?? false
        }
        guard isReady else {
            process.terminate()
            throw BenchmarkError(message: "\(name) did not report ready within \(timeout) (\(log.path))")
        }
        return BenchServer(
            process: process, serverPID: process.processIdentifier, url: "\(scheme)://127.0.0.1:\(port)", port: port,
            directory: directory
        )
    }

    /// A loopback port free now.
    private static func freePort() throws -> Int {
        try ListeningSocket(binding: SocketAddress(ipAddress: "127.0.0.1", port: 0)!).port
    }

    /// The server's CPU time so far (user + system, from /proc), 0 when it cannot be read.
    func cpuSeconds() -> Double { childCPUSeconds(serverPID) }

    /// Kills the server (SIGKILL: what it holds is not needed, and a child of Foundation's `Process` inherits the
    /// blocked signals of the thread that started it, so redis-server never sees a SIGTERM) and waits for it.
    /// rabbitmq-server's Erlang VM (`serverPID`) is killed too: the script's process runs it as a child.
    func stop() {
        if serverPID != process.processIdentifier { kill(serverPID, SIGKILL) }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The CPU time so far (user + system) of child process `pid`, every thread's including those that ended, 0 when it
/// cannot be read. From the process's CPU clock (`clock_getcpuclockid`: nanoseconds, the scheduler's own sum, which
/// Linux lets any process read), else from /proc/PID/stat in clock ticks (10 ms: a 0.3 s snapshot is 30 of them, too
/// coarse to see 5 %, BENCHMARKS.md "Snapshot CPU against the pre-resume binary").
func childCPUSeconds(_ pid: Int32) -> Double {
    var clock = clockid_t()
    var time = timespec()
    if clock_getcpuclockid(pid, &clock) == 0, clock_gettime(clock, &time) == 0 {
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let end = text.lastIndex(of: ")")
    else { return 0 }
    // After the command's closing parenthesis: state is field 3; utime and stime are fields 14 and 15.
    let fields = text[text.index(after: end)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}
