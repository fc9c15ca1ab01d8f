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
        // Files, not pipes: a pipe's end of writing inherited by a process another test starts at the same moment
        // would keep a reader waiting for its end until that process exits (seen with nats-server watchdogs).
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "python-tool")
        let outFile = directory.appendingPathComponent("stdout")
        let errFile = directory.appendingPathComponent("stderr")
        FileManager.default.createFile(atPath: outFile.path, contents: nil)
        FileManager.default.createFile(atPath: errFile.path, contents: nil)
        let stdout = try FileHandle(forWritingTo: outFile)
        let stderr = try FileHandle(forWritingTo: errFile)
        defer {
            try? stdout.close()
            try? stderr.close()
            try? FileManager.default.removeItem(at: directory)
        }
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        var status = ChildExit.wait(process, timeout: TestEnvironment.patient(timeout))
        if status == nil {
            kill(process.processIdentifier, SIGKILL)
            status = ChildExit.wait(process)
        }
        let text = { (file: URL) in (try? String(contentsOf: file, encoding: .utf8)) ?? "" }
        return Result(status: status ?? -1, stdout: text(outFile), stderr: text(errFile))
    }
}
