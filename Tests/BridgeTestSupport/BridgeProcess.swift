import Foundation

/// The real `directus-bridge` binary run by an integration test, with its stdout lines and stderr captured.
public final class BridgeProcess: @unchecked Sendable {
    // @unchecked: every stored property is immutable after init; Process is used from the test's thread.
    private let process = Process()
    private let stdoutPath: URL
    private let stderrPath: URL
    /// The directory holding the config (and the default state dir).
    public let directory: URL

    /// Starts `directus-bridge <arguments>` in `directory` (config files are paths relative to it).
    /// stdout and stderr go to files in `directory` (`stdout.N.log`, `stderr.N.log`), read back on demand: files
    /// never lose or reorder output the way pipe callbacks can, and they stay for post-mortems. With `umask`
    /// (octal text such as `"0277"`) the binary runs with that file-creation mask (through `sh -c`, which
    /// `exec`s it, so `pid` is the bridge's). With `user` (root only) it runs as that uid and gid, through
    /// `setpriv`, which `exec`s it too. With `fileSizeLimitBlocks` it runs under that soft `ulimit -f` (the shell's
    /// blocks) with SIGXFSZ ignored, so a write past it fails part-way with `EFBIG` as one on a full disk does;
    /// `prlimit(1)` lifts it later.
    public init(
        arguments: [String],
        directory: URL,
        environment: [String: String] = [:],
        umask: String? = nil,
        user: uid_t? = nil,
        fileSizeLimitBlocks: Int? = nil
    ) throws {
        self.directory = directory
        var index = 0
        while FileManager.default.fileExists(atPath: directory.appendingPathComponent("stdout.\(index).log").path) {
            index += 1
        }
        stdoutPath = directory.appendingPathComponent("stdout.\(index).log")
        stderrPath = directory.appendingPathComponent("stderr.\(index).log")
        // A file that could not be made fails the FileHandle(forWritingTo:) below, with its reason.
        _ = FileManager.default.createFile(atPath: stdoutPath.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath.path, contents: nil)
        if let user {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments =
                ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", TestEnvironment.bridgeBinary] + arguments
        } else if umask != nil || fileSizeLimitBlocks != nil {
            var setup: [String] = []
            if let umask { setup.append("umask \(umask)") }
            if let fileSizeLimitBlocks { setup.append("trap '' XFSZ && ulimit -S -f \(fileSizeLimitBlocks)") }
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments =
                ["-c", (setup + ["exec \"$0\" \"$@\""]).joined(separator: " && "), TestEnvironment.bridgeBinary]
                + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: TestEnvironment.bridgeBinary)
            process.arguments = arguments
        }
        process.currentDirectoryURL = directory
        var env = TestEnvironment.bridgeEnvironment()
        // The log collector's directory is the test runner's (root's, 0700): a bridge running as another user could
        // not create its copy there and would exit at start. Its lines go unchecked by the schema test.
        if user != nil { env["DIRECTUS_BRIDGE_JSON_LOG_FILE"] = nil }
        env.merge(environment) { _, new in new }
        process.environment = env
        let stdout = try FileHandle(forWritingTo: stdoutPath)
        let stderr = try FileHandle(forWritingTo: stderrPath)
        // The child has its own copies once started. Foundation's Process keeps its standardOutput and standardError
        // for as long as it lives, and never frees some of its objects: two descriptors per bridge stayed open in the
        // test runner, about 1,400 over an integration run, until Foundation's own descriptor scan in Process.run
        // (findMaximumOpenFromProcSelfFD, which copies a whole 256-byte d_name) read past readdir's buffer under
        // AddressSanitizer and aborted the runner.
        defer {
            try? stdout.close()
            try? stderr.close()
        }
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
    }

    /// Writes `yaml` to `bridge.yaml` in a new temporary directory and runs `directus-bridge run` there.
    public static func run(
        config yaml: String,
        in directory: URL? = nil,
        environment: [String: String] = [:],
        umask: String? = nil,
        fileSizeLimitBlocks: Int? = nil
    ) throws -> BridgeProcess {
        let dir = try directory ?? TestEnvironment.makeTemporaryDirectory(prefix: "bridge-run")
        try yaml.write(to: dir.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        return try BridgeProcess(
            arguments: ["run", "--config", "bridge.yaml"],
            directory: dir,
            environment: environment,
            umask: umask,
            fileSizeLimitBlocks: fileSizeLimitBlocks
        )
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            ChildExit.wait(process)
        }
    }

    /// Complete stdout lines so far (a partly written last line is left out).
    public var lines: [String] {
        let text = (try? String(contentsOf: stdoutPath, encoding: .utf8)) ?? ""
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        if !text.hasSuffix("\n"), !lines.isEmpty { lines.removeLast() }
        return lines
    }

    /// stdout lines parsed as JSON objects.
    public var events: [[String: Any]] {
        lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Everything written to stderr so far.
    public var stderr: String { (try? String(contentsOf: stderrPath, encoding: .utf8)) ?? "" }

    /// Whether the process is still running.
    public var isRunning: Bool { process.isRunning }

    /// The process id.
    public var pid: Int32 { process.processIdentifier }

    /// Waits until `condition` holds (checked every 20 ms) or `timeout` (stretched by `TestEnvironment.patience`)
    /// passes; returns whether it held.
    @discardableResult
    public func waitUntil(timeout: TimeInterval = 10, _ condition: (BridgeProcess) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(TestEnvironment.patient(timeout))
        while Date() < deadline {
            if condition(self) { return true }
            usleep(20_000)
        }
        return condition(self)
    }

    /// Waits for a stderr line containing `text`.
    @discardableResult
    public func waitForLog(_ text: String, timeout: TimeInterval = 10) -> Bool {
        waitUntil(timeout: timeout) { $0.stderr.contains(text) }
    }

    /// Waits for the bridge's `connected` log line (every subscription answered on the current connection).
    /// Counts occurrences so a test can wait for a reconnect: `waitUntilConnected(times: 2)`.
    @discardableResult
    public func waitUntilConnected(times: Int = 1, timeout: TimeInterval = 15) -> Bool {
        waitUntil(timeout: timeout) { $0.stderr.components(separatedBy: "subscriptions.live=").count - 1 >= times }
    }

    /// Sends `signal` (SIGTERM, SIGINT, SIGKILL, SIGHUP).
    public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Sends `signal` and waits until the bridge has taken it: the kernel no longer holds it pending for the process
    /// (`ShdPnd` in `/proc/PID/status`), so one of its threads is in the handler or past it. `kill` returns once the
    /// signal is queued; on a loaded machine the bridge's threads can go on for a while before one takes it, and a
    /// test that means "after the signal was delivered" must not count that while as after (seen 1 in 4 at load 23–27
    /// in `LiveSessionTests.aFileSinkIsReopenedOnSIGHUPForLogrotate`). False when it is still pending after `timeout`,
    /// stretched by `TestEnvironment.patience`.
    public func sendAndWaitUntilTaken(_ signal: Int32, timeout: TimeInterval = 10) -> Bool {
        send(signal)
        let status = "/proc/\(process.processIdentifier)/status"
        let bit = UInt64(1) << UInt64(signal - 1)
        let deadline = Date().addingTimeInterval(TestEnvironment.patient(timeout))
        while Date() < deadline {
            guard let text = try? String(contentsOfFile: status, encoding: .utf8),
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ShdPnd:") }),
                let pending = UInt64(line.dropFirst("ShdPnd:".count).trimmingCharacters(in: .whitespaces), radix: 16)
            else { return false }
            if pending & bit == 0 { return true }
            usleep(1_000)
        }
        return false
    }

    /// Waits for the process to exit and returns its exit status (nil when `timeout`, stretched by
    /// `TestEnvironment.patience`, passed first).
    public func waitForExit(timeout: TimeInterval = 15) -> Int32? {
        ChildExit.wait(process, timeout: TestEnvironment.patient(timeout))
    }
}
