import Foundation

/// A one-shot Python helper (a broker reader, a benchmark peer): runs to completion, its output returned.
public enum PythonTool {
    /// What the tool printed and how it ended.
    public struct Result: Sendable {
        /// The exit status (or the signal number when killed).
        public var status: Int32
        /// Everything it wrote to stdout.
        public var stdout: String
        /// Everything it wrote to stderr.
        public var stderr: String
    }

    /// Runs `script` (a path under Tests/tools) with `arguments` through run_peer.py, killing it after `timeout`
    /// (stretched by `TestEnvironment.patience`).
    /// Blocking: call it from a test thread or `BlockingExecutor`, not from code that must stay responsive.
    public static func run(script: String, arguments: [String] = [], timeout: TimeInterval = 120) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.python)
        process.arguments = ["-u", TestEnvironment.tool("run_peer.py"), TestEnvironment.tool(script)] + arguments
        process.environment = TestEnvironment.helperEnvironment()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // Read both pipes while it runs: a tool printing more than a pipe buffer would otherwise block forever.
        let output = OutputCollector()
        let group = DispatchGroup()
        for (pipe, isError) in [(stdout, false), (stderr, true)] {
            group.enter()
            DispatchQueue.global().async {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                output.store(data, isError: isError)
                group.leave()
            }
        }
        let deadline = ContinuousClock.now + .seconds(TestEnvironment.patient(timeout))
        while process.isRunning && ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        group.wait()
        let (out, err) = output.texts
        return Result(status: process.terminationStatus, stdout: out, stderr: err)
    }

    private final class OutputCollector: @unchecked Sendable {
        // @unchecked: both fields are guarded by `lock`.
        private let lock = NSLock()
        private var out = Data()
        private var err = Data()

        func store(_ data: Data, isError: Bool) {
            lock.withLock {
                if isError { err = data } else { out = data }
            }
        }

        var texts: (String, String) {
            lock.withLock { (String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self)) }
        }
    }
}
