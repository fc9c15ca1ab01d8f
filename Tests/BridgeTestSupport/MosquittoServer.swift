import BridgeSystem
import Foundation

/// A real `mosquitto` broker (Debian's package), started by a test on a free loopback port, plain or TLS, with a
/// generated configuration.
///
/// It keeps its port, users and persistence directory across `stop()`/`start()`: a broker stopped with SIGTERM
/// saves its sessions and queued messages and comes back with them. The process is killed when the object goes
/// away.
public final class MosquittoServer: @unchecked Sendable {
    // @unchecked: used by one test task at a time; `server` changes only in start/stop.
    public let port: Int
    public let directory: URL
    /// The certificates of a TLS broker (nil: plain TCP).
    public let certificates: TestCertificates?
    /// Name → password; empty: anonymous access. Changed between `stop()` and `start()`, the broker comes back with
    /// the new password file (credentials refused after the start).
    public var users: [String: String]
    /// More lines of the configuration (`max_packet_size 2000`), read at the next `start()`.
    public var extraConfig = ""
    private var server: WatchedServer?

    /// A broker on a free port; `tls` generates a CA and a certificate for 127.0.0.1; `users` (name → password)
    /// turns anonymous access off.
    public init(in directory: URL, tls: Bool = false, users: [String: String] = [:]) throws {
        self.port = try freeLoopbackPort()
        self.directory = directory
        self.certificates = tls ? try TestCertificates(in: directory.appendingPathComponent("certs")) : nil
        self.users = users
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Kills the broker on `BlockingExecutor.shared`: the last reference often goes on the cooperative pool, where
    /// waiting for the exit would hold one of its two threads (`NATSServer`).
    deinit {
        let server = server
        BlockingExecutor.shared.submit { server?.stop(signal: SIGKILL) }
    }

    /// `mqtt://127.0.0.1:<port>` or `mqtts://…`, with `credentials` (`user:password`) when given.
    public func url(credentials: String? = nil) -> String {
        let scheme = certificates == nil ? "mqtt" : "mqtts"
        return "\(scheme)://" + (credentials.map { "\($0)@" } ?? "") + "127.0.0.1:\(port)"
    }

    /// `start()` on `BlockingExecutor.shared`, for async tests (`NATSServer`).
    public func start() async throws {
        try await BlockingExecutor.shared.perform { try self.start() }
    }

    /// `stop()` on `BlockingExecutor.shared`, for async tests.
    public func stop() async throws {
        try await BlockingExecutor.shared.perform { self.stop() }
    }

    /// Writes the configuration (and password file), starts the broker and waits until it listens (20 s, stretched
    /// by `TestEnvironment.patience`).
    public func start() throws {
        let logFile = directory.appendingPathComponent("mosquitto.log")
        // `max_queued_messages 0`: no limit; mosquitto's default (1,000) drops what a slow or disconnected reader has
        // not taken yet, which a loaded test machine reaches during a restart.
        // `user root`: started as root (CI, containers), mosquitto would switch to the `mosquitto` user, which cannot
        // write the test's directory; for any other user the setting has no effect.
        var config = """
            user root
            per_listener_settings false
            persistence true
            max_queued_messages 0
            persistence_location \(directory.path)/
            log_dest file \(logFile.path)
            log_type error
            log_type warning
            log_type notice
            log_type information
            listener \(port) 127.0.0.1

            """
        if let certificates {
            config += "cafile \(certificates.ca)\ncertfile \(certificates.cert)\nkeyfile \(certificates.key)\n"
        }
        config += extraConfig.isEmpty ? "" : extraConfig + "\n"
        if users.isEmpty {
            config += "allow_anonymous true\n"
        } else {
            let passwordFile = directory.appendingPathComponent("passwords")
            try users.map { "\($0.key):\($0.value)" }.joined(separator: "\n").write(
                to: passwordFile,
                atomically: true,
                encoding: .utf8
            )
            let hash = Process()
            hash.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
            hash.arguments = ["-U", passwordFile.path]
            try hash.run()
            guard ChildExit.wait(hash) == 0 else { throw BrokerServerError.exited(name: "mosquitto_passwd", log: "") }
            config += "allow_anonymous false\npassword_file \(passwordFile.path)\n"
        }
        let configFile = directory.appendingPathComponent("mosquitto.conf")
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        let logStart = BrokerServerLog.size(of: logFile)
        let server = try WatchedServer.start(
            name: "mosquitto",
            executable: "/usr/sbin/mosquitto",
            arguments: ["-c", configFile.path]
        )
        self.server = server
        try server.waitUntil(name: "mosquitto", seconds: 20, log: { log }) {
            let written = BrokerServerLog.text(of: logFile, from: logStart)
            return written.contains("Opening ipv4 listen socket on port \(port)") && written.contains("running")
        }
    }

    /// SIGTERM: the broker saves its state and exits; waits for it.
    public func stop() {
        server?.stop(signal: SIGTERM)
        server = nil
    }

    /// SIGKILLs the broker and waits for it.
    public func kill() {
        server?.stop(signal: SIGKILL)
        server = nil
    }

    /// Freezes the broker (SIGSTOP): connections stay open, nothing is read or acknowledged (a hung broker).
    /// mosquitto runs one thread; `kill` only queues the stop, so this waits until /proc says it stopped (10 s,
    /// stretched).
    public func pause() {
        guard let pid = server?.pid else { return }
        Foundation.kill(pid, SIGSTOP)
        let deadline = ContinuousClock.now + .seconds(TestEnvironment.patient(10))
        while !isStopped(pid) && ContinuousClock.now < deadline { usleep(2_000) }
    }

    /// Lets a paused broker run again (SIGCONT).
    public func resume() {
        if let pid = server?.pid { Foundation.kill(pid, SIGCONT) }
    }

    private func isStopped(_ pid: Int32) -> Bool {
        let data = try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/stat")).readToEnd()
        return ChildExit.processState(inStat: String(decoding: (data ?? nil) ?? Data(), as: UTF8.self)) == "T"
    }

    /// The broker's log, for failure messages.
    public var log: String { BrokerServerLog.tail(of: directory.appendingPathComponent("mosquitto.log")) }
}
