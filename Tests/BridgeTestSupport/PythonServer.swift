import BridgeSystem
import Foundation

/// A Python helper server started by a test: a WebSocket peer, the Directus emulator, a webhook receiver.
///
/// Protocol with the script: it binds to 127.0.0.1 port 0 (or as its arguments say) and prints one line
/// `READY <port>` on stdout once it accepts connections. Everything else it prints goes to the captured log.
/// The process is killed by `stop()` or when the object is released, so a failing test never leaks a server.
public final class PythonServer: StoppableServer, @unchecked Sendable {
    // @unchecked: `process` and `output` are set once in init; `output` guards what it captured itself.
    /// The TCP port the server listens on.
    public let port: Int
    private let process: Process
    /// The server's stdout and stderr, read on a thread of their own (`ServerOutput`).
    private let output: ServerOutput

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
        let output = try ServerOutput()
        let childEnds = output.childEnds
        process.standardOutput = childEnds.stdout
        process.standardError = childEnds.stderr
        try process.run()  // on a throw, `output` goes with its descriptors
        // The child has its own copies: with ours closed, its exit is the pipes' end.
        output.closeChildEnds()
        self.process = process
        self.output = output

        let readyLine = output.readLine(timeout: TestEnvironment.patient(timeout))
        guard let line = readyLine, line.hasPrefix("READY "), let port = Int(line.dropFirst(6)) else {
            PythonServer.terminate(process)
            let errorText = output.availableErrorText()
            output.finish()
            throw PythonServerError.didNotStart(script: script, output: (readyLine ?? "") + "\n" + errorText)
        }
        self.port = port
        do {
            try output.startReading()
        } catch {
            PythonServer.terminate(process)
            output.finish()
            throw error
        }
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
        let output = output
        BlockingExecutor.shared.submit {
            Self.terminate(process)
            output.finish()
        }
    }

    /// What the server printed after `READY` (stdout and stderr interleaved), for assertions and failure output.
    public var log: String { output.text }

    /// Whether the process is still running.
    public var isRunning: Bool { process.isRunning }

    /// `stop()` on `BlockingExecutor.shared`, for async tests (`withServer`): the wait for the exit would hold one of
    /// the cooperative pool's two threads.
    public func stop() async throws {
        try await BlockingExecutor.shared.perform { self.stop() }
    }

    /// Kills the server (SIGTERM, then SIGKILL after one second), waits for it, takes the rest of its output and
    /// closes the pipes (as soon as it is stopped, not when the object goes: a test holds many servers).
    public func stop() {
        Self.terminate(process)
        output.finish()
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
