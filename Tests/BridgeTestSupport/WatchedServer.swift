import Foundation

/// A test server process started through Tests/tools/broker_peers/nats_server.py (a generic watchdog despite its
/// name: it prints the server's pid, and kills the server when the test process is gone, however the run ended).
public struct WatchedServer {
    /// The watchdog process (it exits with the server).
    public let process: Process
    /// The server's own pid, for signals (a crash as clients see it is a SIGKILL of the server, not the watchdog).
    public let pid: Int32
    /// What the server prints on stdout after the watchdog's `PID` line.
    public let output: FileHandle

    /// Starts `executable` with `arguments`; `environment` nil keeps this process's. Throws when the watchdog does not
    /// report a pid (`name` names the server in the error).
    public static func start(
        name: String,
        executable: String,
        arguments: [String],
        environment: [String: String]? = nil,
        directory: URL? = nil,
        standardError: FileHandle = FileHandle.nullDevice
    ) throws -> WatchedServer {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.python)
        process.arguments = ["-u", TestEnvironment.tool("broker_peers/nats_server.py"), executable] + arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = standardError
        try process.run()
        var bytes = Data()
        while !bytes.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData  // blocks until the wrapper prints (or exits)
            if chunk.isEmpty { break }
            bytes.append(chunk)
        }
        let line = String(decoding: bytes, as: UTF8.self)
        guard line.hasPrefix("PID "), let pid = Int32(line.dropFirst(4).prefix { $0.isNumber }) else {
            ChildExit.wait(process)
            throw BrokerServerError.exited(name: name, log: line)
        }
        return WatchedServer(process: process, pid: pid, output: output.fileHandleForReading)
    }

    /// Sends `signal` to the server and waits for the watchdog to exit with it.
    public func stop(signal: Int32) {
        Foundation.kill(pid, signal)
        ChildExit.wait(process)
    }

    /// Waits (`seconds`, stretched by the patience) until `ready` holds; throws naming `name` with `log()` when
    /// the server exits first or the time runs out.
    public func waitUntil(name: String, seconds: TimeInterval, log: () -> String, _ ready: () -> Bool) throws {
        let deadline = ContinuousClock.now + .seconds(TestEnvironment.patient(seconds))
        while ContinuousClock.now < deadline {
            if !process.isRunning { throw BrokerServerError.exited(name: name, log: log()) }
            if ready() { return }
            usleep(20_000)
        }
        throw BrokerServerError.exited(name: name, log: log())
    }
}
