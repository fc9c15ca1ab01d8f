import BridgeConfig
import BridgeCore
import BridgeHTTP
import BridgeJSON
import BridgeSystem

/// `status`: each subscription's and sink's cursor, lag, dead letters, snapshot progress and the service's role,
/// from the state directory (with `state.backend: jetstream`: the shared bucket, and who holds the lease) and —
/// when `http.listen` is set and the service answers there — its `/metrics` and `/readyz` (README.md, "Status").
///
/// Works whether or not the service runs; exit 0 when it could report, 78 for a bad config, 1 when the state files
/// cannot be read. `json`: one object on stdout instead of the lines (README.md, "status --json").
enum StatusCommand {
    static func run(configPath: ConfigSource, json: Bool) async -> ExitCode {
        // Never contacts Directus: its section (and the secrets only it uses) need not resolve.
        guard let config = BridgeApplication.loadConfig(path: configPath, scope: .withoutDirectus) else {
            return .configuration
        }
        let stored: StoredState
        let state = StateBackends.make(config)
        do {
            stored = try await state.read()
        } catch {
            BridgeApplication.printError("directus-bridge: status: cannot read \(state.place): \(error)")
            return .failure
        }
        let service = await probe(config.http)
        let report = StatusReport(config: config, stored: stored, service: service)
        if json {
            BridgeApplication.printOutput(report.json.serializedString())
        } else {
            // Lines quote the state files and the service's answers: cleaned, so that nothing in them forges a line.
            for line in report.lines { BridgeApplication.printOutput(PeerText.sanitized(line, maximumLength: 4096)) }
        }
        return .success
    }

    /// Asks the service at `http.listen` (a wildcard address is asked on loopback) for `/metrics` and `/readyz`.
    static func probe(_ http: HTTPConfig) async -> StatusReport.Service {
        guard let listen = http.listen else { return .unknown(reason: "http.listen is off") }
        guard listen.port != 0 else { return .unknown(reason: "http.listen has port 0, chosen anew at every start") }
        let host =
            switch listen.host {
            case "0.0.0.0", "": "127.0.0.1"
            case "::": "[::1]"
            case let host where host.contains(":"): "[\(host)]"
            case let host: host
            }
        let base = "http://\(host):\(listen.port)"
        let client = HTTPClient(
            options: HTTPClientOptions(
                connectTimeout: .seconds(2), requestTimeout: .seconds(5), userAgent: "directus-bridge status",
                maxResponseBytes: 16 << 20))
        do {
            let metrics = try await client.send(HTTPRequest(method: "GET", url: base + "/metrics", timeout: .seconds(5)))
            guard metrics.status == 200 else {
                return .notRunning(url: base, error: "/metrics answered HTTP \(metrics.status)")
            }
            let readiness = try await client.send(HTTPRequest(method: "GET", url: base + "/readyz", timeout: .seconds(5)))
            return .running(
                url: base, metrics: MetricSamples(text: String(decoding: metrics.body, as: UTF8.self)),
                ready: readiness.status == 200, readiness: String(decoding: readiness.body, as: UTF8.self))
        } catch {
            return .notRunning(url: base, error: "\(error)")
        }
    }
}
