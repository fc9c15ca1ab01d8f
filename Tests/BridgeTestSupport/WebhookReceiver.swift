import BridgeSystem
import Foundation

/// The scriptable webhook receiver (Tests/tools/http_peers/webhook_receiver.py), started for one test.
///
/// Hooks go to `hookURL(path)`; `script`, `setSecrets`, `down`/`up` shape its behaviour; `requests` returns every
/// request it saw, with `standardwebhooks`' verdict per configured secret.
public final class WebhookReceiver: StoppableServer, @unchecked Sendable {
    // @unchecked: `server` and `hookPort` are immutable after init; PythonServer is thread-safe.
    /// The process.
    public let server: PythonServer
    /// The port of the hook listener (stable across `down`/`up`).
    public let hookPort: Int

    /// One request the receiver saw.
    public struct Request: @unchecked Sendable {
        // @unchecked: `verified` holds JSON values (Bool or String) only.
        /// Arrival order.
        public var n: Int
        /// Arrival time (the receiver's monotonic clock, seconds).
        public var time: Double
        /// Arrival time, Unix seconds (to compare with `webhook-timestamp`).
        public var wallTime: Double
        /// The path.
        public var path: String
        /// Headers, names lower-case.
        public var headers: [String: String]
        /// The body text.
        public var body: String
        /// `webhook-id`.
        public var id: String
        /// The status answered; nil when the client gave up first.
        public var status: Int?
        /// Whether the client closed the connection before the answer.
        public var aborted: Bool
        /// Seconds from arrival until the client gave up.
        public var abortedAfter: Double?
        /// Per configured secret: true, or the verification error.
        public var verified: [Any]

        /// The body parsed as a JSON object.
        public var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
        }
        /// Whether the answer was 2xx.
        public var delivered: Bool { status.map { (200..<300).contains($0) } ?? false }
    }

    /// Starts the receiver.
    public init() throws {
        server = try PythonServer(script: "http_peers/webhook_receiver.py")
        let info = try Self.call(port: server.port, method: "GET", path: "/_control/info", body: nil)
        guard let port = info["hook_port"] as? Int else { throw EmulatorError(message: "receiver info: \(info)") }
        hookPort = port
    }

    /// `init` on `BlockingExecutor.shared`, for async tests: the Python server's start and the first request
    /// would otherwise hold one of the cooperative pool's two threads (`PythonServer.start`).
    public static func start() async throws -> WebhookReceiver {
        try await BlockingExecutor.shared.perform { try WebhookReceiver() }
    }

    /// Stops the receiver.
    public func stop() { server.stop() }

    /// Stops the receiver on `BlockingExecutor.shared` (`PythonServer.stop`).
    public func stop() async throws { try await server.stop() }

    /// `http://127.0.0.1:<hook port><path>`.
    public func hookURL(_ path: String = "/hook") -> String { "http://127.0.0.1:\(hookPort)\(path)" }

    /// Answers: `steps` one per request in arrival order, then `defaultStep`; `randomDelayMs` adds a uniform
    /// random delay to every request. A step: `["status": 503, "headers": ["retry-after": "2"], "body": "…",
    /// "delay_ms": 100, "hang": true]`; `["hold": "NAME"]` keeps a request open until `release("NAME")`.
    public func script(
        steps: [[String: Any]] = [],
        defaultStep: [String: Any] = ["status": 204],
        randomDelayMs: [Int]? = nil
    ) throws {
        var body: [String: Any] = ["steps": steps, "default": defaultStep]
        if let randomDelayMs { body["random_delay_ms"] = randomDelayMs }
        try control("/_control/script", body)
    }

    /// Secrets to verify each path's requests with: `"whsec_…"` strings, or `["raw": "text"]` for raw secrets.
    public func setSecrets(_ paths: [String: [Any]]) throws {
        try control("/_control/secrets", ["paths": paths])
    }

    /// Refuses hook connections (and drops open ones) until `up()`, or for `milliseconds` when positive.
    public func down(milliseconds: Int = 0) throws { try control("/_control/down", ["ms": milliseconds]) }

    /// Accepts hook connections again.
    public func up() throws { try control("/_control/up", [:]) }

    /// Answers the requests held by steps `["hold": name]`, and lets later ones through at once.
    public func release(_ name: String) throws { try control("/_control/release", ["name": name]) }

    /// Every request so far, in arrival order.
    public func requests() throws -> [Request] {
        let answer = try Self.call(port: server.port, method: "GET", path: "/_control/requests", body: nil)
        return (answer["requests"] as? [[String: Any]] ?? []).map { record in
            let status = record["status"] as? Int
            return Request(
                n: record["n"] as? Int ?? 0,
                time: record["t"] as? Double ?? 0,
                wallTime: record["wall"] as? Double ?? 0,
                path: record["path"] as? String ?? "",
                headers: record["headers"] as? [String: String] ?? [:],
                body: record["body"] as? String ?? "",
                id: record["id"] as? String ?? "",
                status: status,
                aborted: record["aborted"] as? Bool ?? false,
                abortedAfter: record["aborted_after"] as? Double,
                verified: record["verified"] as? [Any] ?? []
            )
        }
    }

    /// Requests answered 2xx.
    public func delivered() throws -> [Request] { try requests().filter(\.delivered) }

    /// The requests received before the first one carrying the event of a sentinel change (its `key`), or nil when
    /// none came within `timeout` (stretched by `TestEnvironment.patience`): for "nothing more arrives" checks, as
    /// `BridgeProcess.events(beforeSentinel:)` (a webhook sink delivers in change order).
    public func requests(beforeSentinel key: String, timeout: TimeInterval = 10) throws -> [Request]? {
        let deadline = Date().addingTimeInterval(TestEnvironment.patient(timeout))
        repeat {
            let all = try requests()
            if let index = all.firstIndex(where: { $0.json["key"] as? String == key }) { return Array(all[..<index]) }
            usleep(20_000)
        } while Date() < deadline
        return nil
    }

    private func control(_ path: String, _ body: [String: Any]) throws {
        _ = try Self.call(port: server.port, method: "POST", path: path, body: body)
    }

    private static func call(port: Int, method: String, path: String, body: [String: Any]?) throws -> [String: Any] {
        var headers: [String: String] = [:]
        var encoded: Data?
        if let body {
            headers["Content-Type"] = "application/json"
            encoded = try JSONSerialization.data(withJSONObject: body)
        }
        let answer: FetchedResponse
        do {
            answer = try HTTPFetch.request(
                method,
                "http://127.0.0.1:\(port)\(path)",
                headers: headers,
                body: encoded,
                timeout: 10
            )
        } catch {
            throw EmulatorError(message: "receiver \(path): \(error)")
        }
        return answer.json
    }
}

/// Reads the bridge's webhook outbox (`<state_dir>/webhooks.db`) with Python's sqlite3, as a test probe.
public enum OutboxProbe {
    /// The event ids waiting in the outbox (empty when the file does not exist yet).
    public static func pendingIDs(stateDir: URL) -> [String] {
        let path = stateDir.appendingPathComponent("webhooks.db").path
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.python)
        process.arguments = [
            "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=5); "
                + "print('\\n'.join(r[0] for r in c.execute('SELECT event_id FROM outbox ORDER BY seq')))",
            path,
        ]
        let stdout = Pipe()
        process.standardOutput = stdout
        guard (try? process.run()) != nil else { return [] }
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        ChildExit.wait(process)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Runs `sql` on the outbox of a stopped bridge (what a bridge with another clock would have written); throws
    /// when it fails.
    public static func execute(stateDir: URL, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.python)
        process.arguments = [
            "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=5); c.execute(sys.argv[2]); c.commit()",
            stateDir.appendingPathComponent("webhooks.db").path, sql,
        ]
        try process.run()
        // The status ChildExit gives, never the one Process keeps: Foundation may not have reaped the child yet,
        // and its getter then traps (`ChildExit`).
        let status = ChildExit.wait(process)
        guard status == 0 else {
            throw EmulatorError(message: "outbox probe: \(sql) exited \(status.map(String.init) ?? "?")")
        }
    }
}
