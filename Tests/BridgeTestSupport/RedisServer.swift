import BridgeSystem
import Foundation

/// A real `redis-server` (Debian's package), started by a test on a free loopback port, plain or TLS.
///
/// It keeps its port, password and data directory across `kill()`/`start()`, with an append-only file synced on
/// every write (`appendfsync always`), so a restarted server comes back with every entry it acknowledged. The
/// process is killed when the object goes away.
public final class RedisServer: @unchecked Sendable {
    // @unchecked: used by one test task at a time; `server` changes only in start/kill.
    public let port: Int
    public let directory: URL
    /// The certificates of a TLS server (nil: plain TCP).
    public let certificates: TestCertificates?
    /// The default user's password (`requirepass`), if any.
    private let requirePassword: String?
    /// An ACL user allowed everything, if any.
    private let aclUser: (name: String, password: String)?
    /// Whether `DEBUG` is allowed from loopback (`DEBUG SLEEP` makes the server slow).
    private let debugCommand: Bool
    private var server: WatchedServer?

    /// A server on a free port; `tls` generates a CA and a certificate for 127.0.0.1; `password` protects the
    /// default user; `user` adds an ACL user with all rights; `debugCommand` allows `DEBUG` from loopback.
    public init(
        in directory: URL,
        tls: Bool = false,
        password: String? = nil,
        user: (name: String, password: String)? = nil,
        debugCommand: Bool = false
    ) throws {
        self.port = try freeLoopbackPort()
        self.directory = directory
        self.certificates = tls ? try TestCertificates(in: directory.appendingPathComponent("certs")) : nil
        self.requirePassword = password
        self.aclUser = user
        self.debugCommand = debugCommand
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Kills the server on `BlockingExecutor.shared`: the last reference often goes on the cooperative pool, where
    /// waiting for the exit would hold one of its two threads (`NATSServer`).
    deinit {
        let server = server
        BlockingExecutor.shared.submit { server?.stop(signal: SIGKILL) }
    }

    /// `redis://127.0.0.1:<port>` or `rediss://…`, with `credentials` (`user:password` or `:password`) when given.
    public func url(credentials: String? = nil, database: Int? = nil) -> String {
        let scheme = certificates == nil ? "redis" : "rediss"
        let userInfo = credentials.map { "\($0)@" } ?? ""
        return "\(scheme)://\(userInfo)127.0.0.1:\(port)" + (database.map { "/\($0)" } ?? "")
    }

    /// `start()` on `BlockingExecutor.shared`, for async tests (`NATSServer`).
    public func start() async throws {
        try await BlockingExecutor.shared.perform { try self.start() }
    }

    /// `kill()` on `BlockingExecutor.shared`, for async tests.
    public func kill() async throws {
        try await BlockingExecutor.shared.perform { self.kill() }
    }

    /// Starts the server and waits until it accepts connections (20 s, stretched by `TestEnvironment.patience`).
    public func start() throws {
        var config = """
            bind 127.0.0.1
            dir \(directory.path)
            logfile \(directory.appendingPathComponent("server.log").path)
            save ""
            appendonly yes
            appendfsync always
            protected-mode no

            """
        if let certificates {
            config += """
                port 0
                tls-port \(port)
                tls-cert-file \(certificates.cert)
                tls-key-file \(certificates.key)
                tls-ca-cert-file \(certificates.ca)
                tls-auth-clients no

                """
        } else {
            config += "port \(port)\n"
        }
        if let requirePassword { config += "requirepass \(requirePassword)\n" }
        if debugCommand { config += "enable-debug-command local\n" }
        if let aclUser { config += "user \(aclUser.name) on >\(aclUser.password) ~* &* +@all\n" }
        let configFile = directory.appendingPathComponent("redis.conf")
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        let logFile = directory.appendingPathComponent("server.log")
        let logStart = BrokerServerLog.size(of: logFile)
        let server = try WatchedServer.start(
            name: "redis-server",
            executable: "/usr/bin/redis-server",
            arguments: [configFile.path]
        )
        self.server = server
        // Ready when this run's part of its log says so (a connection that succeeds could reach another process
        // that took the port first).
        try server.waitUntil(name: "redis-server", seconds: 20, log: { log }) {
            BrokerServerLog.text(of: logFile, from: logStart).contains("Ready to accept connections")
        }
    }

    /// SIGKILLs the server (a crash as clients see it) and waits for it.
    public func kill() {
        server?.stop(signal: SIGKILL)
        server = nil
    }

    /// Every entry of `stream`, read with redis-py (Tests/tools/broker_peers/redis_read.py). Blocking.
    public func readStream(_ stream: String, credentials: String? = nil) throws -> [RedisStreamRecord] {
        let arguments = [url(credentials: credentials), stream] + (certificates.map { ["--ca", $0.ca] } ?? [])
        let result = try PythonTool.run(script: "broker_peers/redis_read.py", arguments: arguments, timeout: 120)
        guard result.status == 0 else { throw BrokerServerError.exited(name: "redis_read.py", log: result.stderr) }
        struct Output: Decodable { var entries: [RedisStreamRecord] }
        return try JSONDecoder().decode(Output.self, from: Data(result.stdout.utf8)).entries
    }

    /// The server's log, for failure messages.
    public var log: String { BrokerServerLog.tail(of: directory.appendingPathComponent("server.log")) }
}

/// One stream entry as redis-py read it.
public struct RedisStreamRecord: Decodable, Sendable {
    /// The entry id (`<ms>-<seq>`).
    public var id: String
    /// The fields, values as UTF-8 text.
    public var fields: [String: String]
}

/// Why a test broker could not be used.
public enum BrokerServerError: Error, CustomStringConvertible {
    case exited(name: String, log: String)

    public var description: String {
        switch self {
        case .exited(let name, let log): "\(name) did not start: \(log)"
        }
    }
}

/// Reading a test broker's log file.
public enum BrokerServerLog {
    /// What `file` holds from byte `offset` on (empty when it cannot be read).
    public static func text(of file: URL, from offset: Int) -> String {
        guard let handle = try? FileHandle(forReadingFrom: file) else { return "" }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: UInt64(offset))) != nil, let data = try? handle.readToEnd() else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The size of `file` now (0 when it does not exist yet): where a server's log of the next start begins.
    public static func size(of file: URL) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
    }

    /// The last 3,000 characters of `file`.
    public static func tail(of file: URL) -> String {
        (try? String(contentsOf: file, encoding: .utf8)).map { String($0.suffix(3000)) } ?? ""
    }
}
