import BridgeSystem
import Foundation

/// A Python helper server started by a test: a WebSocket peer, the Directus emulator, a webhook receiver.
///
/// Protocol with the script: it binds to 127.0.0.1 port 0 (or as its arguments say) and prints one line
/// `READY <port>` on stdout once it accepts connections. Everything else it prints goes to the captured log.
/// The process is killed by `stop()` or when the object is released, so a failing test never leaks a server.
public final class PythonServer: StoppableServer, @unchecked Sendable {
    // @unchecked: `process` and the pipes are set once in init; `log` is guarded by `lock`.
    /// The TCP port the server listens on.
    public let port: Int
    private let process: Process
    /// The read ends of the server's stdout and stderr pipes.
    private let outputs: [FileHandle]
    private let lock = NSLock()
    private var capturedLog = Data()
    private var outputsClosed = false

    /// Starts `script` (a path under Tests/tools) with `arguments` and waits up to `timeout` (stretched by
    /// `TestEnvironment.patience`) for `READY <port>`.
    public init(
        script: String,
        arguments: [String] = [],
        environment: [String: String] = [:],
        timeout: TimeInterval = 20
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.python)
        // Through run_peer.py: the server exits when this test process is gone, however the test run ended.
        process.arguments = ["-u", TestEnvironment.tool("run_peer.py"), TestEnvironment.tool(script)] + arguments
        process.environment = TestEnvironment.helperEnvironment(environment)
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        self.process = process
        outputs = [stdout.fileHandleForReading, stderr.fileHandleForReading]

        let readyLine = PythonServer.readLine(
            from: stdout.fileHandleForReading,
            timeout: TestEnvironment.patient(timeout)
        )
        guard let line = readyLine, line.hasPrefix("READY "), let port = Int(line.dropFirst(6)) else {
            process.terminate()
            let errorText = String(decoding: stderr.fileHandleForReading.availableData, as: UTF8.self)
            throw PythonServerError.didNotStart(script: script, output: (readyLine ?? "") + "\n" + errorText)
        }
        self.port = port
        let append: @Sendable (FileHandle) -> Void = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else {
                handle.readabilityHandler = nil
                return
            }
            self.lock.withLock { self.capturedLog.append(data) }
        }
        stdout.fileHandleForReading.readabilityHandler = append
        stderr.fileHandleForReading.readabilityHandler = append
    }

    /// `init` on `BlockingExecutor.shared`, for async tests: the wait for `READY` (a Python start-up, seconds on a
    /// loaded machine) would otherwise hold one of the cooperative pool's two threads, and every other test's task
    /// with it.
    public static func start(
        script: String,
        arguments: [String] = [],
        environment: [String: String] = [:],
        timeout: TimeInterval = 20
    ) async throws -> PythonServer {
        try await BlockingExecutor.shared.perform {
            try PythonServer(script: script, arguments: arguments, environment: environment, timeout: timeout)
        }
    }

    /// Kills the server on `BlockingExecutor.shared`: the last reference often goes on the cooperative pool, where
    /// waiting up to a second for the exit would hold one of its two threads.
    deinit {
        let process = process
        BlockingExecutor.shared.submit { Self.terminate(process) }
    }

    /// What the server printed after `READY` (stdout and stderr interleaved), for assertions and failure output.
    public var log: String { lock.withLock { String(decoding: capturedLog, as: UTF8.self) } }

    /// Whether the process is still running.
    public var isRunning: Bool { process.isRunning }

    /// `stop()` on `BlockingExecutor.shared`, for async tests (`withServer`): the wait for the exit would hold one of
    /// the cooperative pool's two threads.
    public func stop() async throws {
        try await BlockingExecutor.shared.perform { self.stop() }
    }

    /// Kills the server (SIGTERM, then SIGKILL after one second), waits for it, and closes the pipes of its output:
    /// Foundation's Process keeps them open as long as it lives, and never frees some of its objects (two descriptors
    /// per server stayed open in the test runner; `BridgeProcess.init`). Not from `deinit`, which may run on a
    /// pipe's own handler thread, where closing the pipe traps.
    public func stop() {
        Self.terminate(process)
        guard
            lock.withLock({ () -> Bool in
                defer { outputsClosed = true }
                return !outputsClosed
            })
        else { return }  // stopped before: the pipes are closed
        for output in outputs {
            output.readabilityHandler = nil
            try? output.close()
        }
    }

    /// Kills the server (SIGTERM, then SIGKILL after one second) and waits for it.
    private static func terminate(_ process: Process) {
        guard process.isRunning else { return }
        process.terminate()
        if ChildExit.wait(process, timeout: 1) == nil {
            kill(process.processIdentifier, SIGKILL)
            ChildExit.wait(process)
        }
    }

    private static func readLine(from handle: FileHandle, timeout: TimeInterval) -> String? {
        var buffer = Data()
        let deadline = Date().addingTimeInterval(timeout)
        let fd = handle.fileDescriptor
        while Date() < deadline {
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pollFD, 1, 100)
            if ready <= 0 { continue }
            var byte: UInt8 = 0
            let count = read(fd, &byte, 1)
            if count <= 0 { return buffer.isEmpty ? nil : String(decoding: buffer, as: UTF8.self) }
            if byte == 0x0A { return String(decoding: buffer, as: UTF8.self) }
            buffer.append(byte)
        }
        return nil
    }
}

/// Why a helper server could not be used.
public enum PythonServerError: Error, CustomStringConvertible {
    /// The script exited or printed something other than `READY <port>` in time.
    case didNotStart(script: String, output: String)

    public var description: String {
        switch self {
        case .didNotStart(let script, let output): "\(script) did not print READY <port>: \(output)"
        }
    }
}
