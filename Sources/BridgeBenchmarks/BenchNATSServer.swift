import BridgeSystem
import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A nats-server with JetStream on a free loopback port, for the benchmark.
struct BenchNATSServer {
    let process: Process
    let url: String
    let directory: URL

    static func start() throws -> BenchNATSServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-nats-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let port = try ListeningSocket(binding: SocketAddress(ipAddress: "127.0.0.1", port: 0)!).port
        let process = Process()
        // Debian installs it in /usr/sbin.
        process.executableURL = URL(
            fileURLWithPath: ["/usr/sbin/nats-server", "/usr/bin/nats-server"]
                .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/sbin/nats-server"
        )
        process.arguments = ["-a", "127.0.0.1", "-p", "\(port)", "-js", "-sd", directory.path]
        let log = directory.appendingPathComponent("nats-server.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: log)
        let watch = try FileWatch(path: log.path)
        try process.run()
        let ready = watch.wait(timeout: .seconds(10)) {
            (try? String(contentsOf: log, encoding: .utf8))?.contains("Server is ready") ?? false
        }
        guard ready else {
            process.terminate()
            throw BenchmarkError(message: "nats-server did not report ready within 10 s (\(log.path))")
        }
        return BenchNATSServer(process: process, url: "nats://127.0.0.1:\(port)", directory: directory)
    }

    /// The server's CPU time so far (user + system, from /proc), 0 when it cannot be read.
    func cpuSeconds() -> Double { childCPUSeconds(process.processIdentifier) }

    func stop() {
        process.terminate()
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
