import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
        var request = URLRequest(url: URL(string: url + path)!)
        request.httpMethod = method
        request.timeoutInterval = 60
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
        }
        let result = SyncResult()
        URLSession.shared.dataTask(with: request) { data, response, error in
            result.set(data, (response as? HTTPURLResponse)?.statusCode, error)
        }.resume()
        let (data, status, error) = result.wait()
        if let error { throw EmulatorError(message: "\(method) \(path): \(error)") }
        guard let status, (200..<300).contains(status) else {
            let text = data.map { String(decoding: $0, as: UTF8.self) } ?? ""
            throw EmulatorError(message: "\(method) \(path): HTTP \(status ?? 0) \(text)")
        }
        guard let data, !data.isEmpty else { return [String: Any]() }
        return (try? JSONSerialization.jsonObject(with: data)) ?? [String: Any]()
    }
}

/// A failed emulator call.
public struct EmulatorError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

private final class SyncResult: @unchecked Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private var value: (Data?, Int?, (any Error)?) = (nil, nil, nil)
    func set(_ data: Data?, _ status: Int?, _ error: (any Error)?) {
        value = (data, status, error)
        semaphore.signal()
    }
    func wait() -> (Data?, Int?, (any Error)?) {
        semaphore.wait()
        return value
    }
}
