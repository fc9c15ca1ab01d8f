import BridgeSystem
import Foundation

/// The bundled Directus emulator (Tests/tools/directus_emulator), started for one test on a random port.
///
/// `control` calls its `/_emulator/*` API (documented in Tests/tools/directus_emulator/README.md); `rest` calls
/// the Directus REST API as a given user.
public final class Emulator: @unchecked Sendable {
    // @unchecked: `server` is immutable after init and PythonServer is thread-safe.
    /// The process.
    public let server: PythonServer
    /// `http://127.0.0.1:<port>`.
    public var url: String { "http://127.0.0.1:\(server.port)" }

    /// Starts the emulator with extra command-line `arguments` (e.g. `["--heartbeat-period", "1"]`).
    public init(arguments: [String] = []) throws {
        server = try PythonServer(
            script: "directus_emulator/server.py", arguments: ["--port", "0", "--log-level", "warning"] + arguments)
    }

    /// `init` on `BlockingExecutor.shared`, for async tests: the wait for the Python server's start would otherwise
    /// hold one of the cooperative pool's two threads (`PythonServer.start`).
    public static func start(arguments: [String] = []) async throws -> Emulator {
        try await BlockingExecutor.shared.perform { try Emulator(arguments: arguments) }
    }

    /// Stops the emulator.
    public func stop() { server.stop() }

    /// `POST /_emulator/<path>` with a JSON body; returns the parsed JSON answer.
    @discardableResult
    public func control(_ path: String, _ body: [String: Any] = [:]) throws -> Any {
        try request("POST", "/_emulator/\(path)", body: body, token: nil)
    }

    /// `GET /_emulator/<path>`.
    public func controlGet(_ path: String) throws -> [String: Any] {
        try request("GET", "/_emulator/\(path)", body: nil, token: nil) as? [String: Any] ?? [:]
    }

    /// A REST call to the emulated Directus with `token` (default: the admin's static token).
    @discardableResult
    public func rest(_ method: String, _ path: String, _ body: Any? = nil, token: String = "admin-static-token")
        throws -> Any
    {
        try request(method, path, body: body, token: token)
    }

    /// Creates an item and returns its primary key as text.
    @discardableResult
    public func create(_ collection: String, _ item: [String: Any]) throws -> String {
        let answer = try rest("POST", "/items/\(collection)", item) as? [String: Any]
        let data = answer?["data"] as? [String: Any]
        return "\(data?["id"] ?? data?["slug"] ?? "")"
    }

    private func request(_ method: String, _ path: String, body: Any?, token: String?) throws -> Any {
        var headers: [String: String] = [:]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        var encoded: Data?
        if let body {
            headers["Content-Type"] = "application/json"
            encoded = try JSONSerialization.data(withJSONObject: body)
        }
        let answer: FetchedResponse
        do {
            answer = try HTTPFetch.request(method, url + path, headers: headers, body: encoded, timeout: 60)
        } catch {
            throw EmulatorError(message: "\(method) \(path): \(error)")
        }
        guard (200..<300).contains(answer.status) else {
            throw EmulatorError(message: "\(method) \(path): HTTP \(answer.status) \(answer.text)")
        }
        guard !answer.body.isEmpty else { return [String: Any]() }
        return (try? JSONSerialization.jsonObject(with: answer.body)) ?? [String: Any]()
    }
}

/// A failed emulator call.
public struct EmulatorError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
