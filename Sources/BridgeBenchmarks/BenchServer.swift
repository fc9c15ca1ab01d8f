import BridgeSystem
import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A broker server on a free loopback port for a benchmark (nats-server with JetStream, redis-server in memory,
/// mosquitto), its output in a log file of its own directory, ready when the log says so.
struct BenchServer {
    let process: Process
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

    private static func start(
        name: String,
        executables: [String],
        scheme: String,
        ready: String,
        arguments: (Int, URL) throws -> [String]
    ) throws -> BenchServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(name)-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let port = try ListeningSocket(binding: SocketAddress(ipAddress: "127.0.0.1", port: 0)!).port
        let process = Process()
        // Debian installs nats-server in /usr/sbin.
        process.executableURL = URL(
            fileURLWithPath: executables.first { FileManager.default.isExecutableFile(atPath: $0) } ?? executables[0]
        )
        process.arguments = try arguments(port, directory)
        let log = directory.appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        process.standardOutput = logHandle
        process.standardError = logHandle
        let watch = try FileWatch(path: log.path)
        try process.run()
        let isReady = watch.wait(timeout: .seconds(10)) {
            (try? String(contentsOf: log, encoding: .utf8))?.contains(ready) ?? false
        }
        guard isReady else {
            process.terminate()
            throw BenchmarkError(message: "\(name) did not report ready within 10 s (\(log.path))")
        }
        return BenchServer(process: process, url: "\(scheme)://127.0.0.1:\(port)", port: port, directory: directory)
    }

    /// The server's CPU time so far (user + system, from /proc), 0 when it cannot be read.
    func cpuSeconds() -> Double { childCPUSeconds(process.processIdentifier) }

    /// Kills the server (SIGKILL: what it holds is not needed, and a child of Foundation's `Process` inherits the
    /// blocked signals of the thread that started it, so redis-server never sees a SIGTERM) and waits for it.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The CPU time so far (user + system, from /proc) of child process `pid`, 0 when it cannot be read.
func childCPUSeconds(_ pid: Int32) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let end = text.lastIndex(of: ")")
    else { return 0 }
    // After the command's closing parenthesis: state is field 3; utime and stime are fields 14 and 15.
    let fields = text[text.index(after: end)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}
