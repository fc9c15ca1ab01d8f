import BridgeSystem
import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A mosquitto broker on a free loopback port, for the benchmark: anonymous, no persistence (nothing subscribes, so
/// nothing is kept), errors only in its log.
struct BenchMosquitto {
    let process: Process
    let port: Int
    let directory: URL

    static func start() throws -> BenchMosquitto {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-mosquitto-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let port = try ListeningSocket(binding: SocketAddress(ipAddress: "127.0.0.1", port: 0)!).port
        let log = directory.appendingPathComponent("mosquitto.log")
        let config = directory.appendingPathComponent("mosquitto.conf")
        // `user root`: started as root, mosquitto would switch to its own user, which cannot write the log here.
        try """
        user root
        listener \(port) 127.0.0.1
        allow_anonymous true
        persistence false
        log_dest file \(log.path)
        log_type error
        log_type notice
        log_type information

        """.write(to: config, atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        process.arguments = ["-c", config.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let watch = try FileWatch(path: log.path)
        try process.run()
        let ready = watch.wait(timeout: .seconds(10)) {
            (try? String(contentsOf: log, encoding: .utf8))?.contains("listen socket on port \(port)") ?? false
        }
        guard ready else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw BenchmarkError(message: "mosquitto did not report listening within 10 s (\(log.path))")
        }
        return BenchMosquitto(process: process, port: port, directory: directory)
    }

    /// The broker's CPU time so far.
    func cpuSeconds() -> Double { childCPUSeconds(process.processIdentifier) }

    /// SIGKILL: mosquitto inherits this process's blocked signals, SIGTERM among them (a SIGTERM left it running),
    /// and with no persistence there is nothing for it to save.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}
