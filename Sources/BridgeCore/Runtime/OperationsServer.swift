public import BridgeConfig
public import BridgeHTTPServer
public import BridgeSystem
public import BridgeEvents
internal import BridgeDirectus
internal import BridgeActivity
internal import BridgeSinks

/// The operations endpoint on `http.listen`: `/metrics` (Prometheus text 0.0.4), `/healthz` (200 while the process
/// runs) and `/readyz` (200 when `HealthState` says ready, else 503 with a JSON body saying why).
///
/// It starts before the bridge authenticates, so a supervisor sees the process alive and not yet ready, and it
/// runs on its own threads: a slow or malicious scraper cannot delay the socket reader or the sinks.
public enum OperationsServer {
    /// The content type Prometheus expects for the text exposition format.
    public static let metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

    /// How the first attempt to listen on `http.listen` went.
    public enum Start {
        /// `http.listen` is off.
        case off
        /// Serving; the caller stops the server at the end of the run.
        case listening(HTTPServer)
        /// Another process holds the port (`HTTPServerError.isRetriable`): `keepListening` tries again.
        case waiting(Binding, HTTPServerError)
    }

    /// What `keepListening` binds: the addresses `http.listen` resolved to, and the routes.
    public struct Binding: Sendable {
        let addresses: [SocketAddress]
        let label: String
        let routes: [String: HTTPRouteHandler]
    }

    /// The first attempt to listen on `http.listen`, and the log line saying where it serves (with the real port
    /// when the configured one is 0). A failure no retry can mend (a name that does not resolve, an address not on
    /// this host, a port below 1024 without the capability) is a configuration problem (exit 78); a port another
    /// process holds is `waiting`. `redactor` hides the configured secrets in `/readyz` reasons (they may quote a
    /// server's or a sink's error).
    public static func start(
        _ http: HTTPConfig,
        registry: MetricsRegistry,
        health: HealthState,
        redactor: Redactor,
        logger: Logger
    ) async throws(RuntimeOutcome) -> Start {
        guard let listen = http.listen else { return .off }
        let addresses: [SocketAddress]
        if let numeric = SocketAddress(ipAddress: listen.host, port: listen.port) {
            addresses = [numeric]
        } else {
            do {
                // getaddrinfo blocks: resolve on the blocking pool, not the cooperative one.
                addresses = try await BlockingExecutor.shared.perform {
                    try AddressResolver.resolve(host: listen.host, port: listen.port)
                }
            } catch {
                throw .configurationProblem("http.listen \(listen): \(error)")
            }
        }
        let binding = Binding(
            addresses: addresses, label: listen.description,
            routes: routes(registry: registry, health: health, redactor: redactor))
        do {
            return .listening(try serve(binding, logger: logger))
        } catch where error.isRetriable {
            return .waiting(binding, error)
        } catch {
            throw .configurationProblem("http.listen: \(error)")
        }
    }

    /// Listens on `binding` and logs where (with the real port when the configured one is 0).
    static func serve(_ binding: Binding, logger: Logger) throws(HTTPServerError) -> HTTPServer {
        let server = try HTTPServer(addresses: binding.addresses, label: binding.label, routes: binding.routes)
        logger.info(
            "serving /metrics, /healthz and /readyz",
            metadata: ["http.listen": server.boundAddresses.map(\.description).joined(separator: ",")]
        )
        return server
    }

    /// The three routes, over `registry` and `health`.
    public static func routes(registry: MetricsRegistry, health: HealthState, redactor: Redactor = Redactor())
        -> [String: HTTPRouteHandler]
    {
        [
            "/metrics": { _ in
                HTTPServerResponse(status: 200, contentType: metricsContentType, text: registry.render())
            },
            "/healthz": { _ in
                HTTPServerResponse(status: 200, contentType: "application/json", text: #"{"status":"ok"}"# + "\n")
            },
            "/readyz": { _ in
                let snapshot = health.snapshot
                return HTTPServerResponse(
                    status: snapshot.isReady ? 200 : 503,
                    contentType: "application/json",
                    text: readinessJSON(snapshot, redactor: redactor) + "\n"
                )
            },
        ]
    }

    /// `{"ready":false,"reasons":[…],"connected":…,"authenticated":…,"subscriptions":{"configured":[…],"live":[…]},
    /// "stuck_sinks":{…},"sink_lag":{…},"shutting_down":…}` — the reasons are the ones `HealthState` gives a person;
    /// `sink_lag` is each sink's activity rows behind the newest id (activity mode). Every text is redacted raw, before
    /// it is escaped (escaped, a secret with a quote no longer matches), and bounded: a reason may quote a peer.
    public static func readinessJSON(_ snapshot: HealthState.Snapshot, redactor: Redactor = Redactor()) -> String {
        let shown = { (text: String) in PeerText.sanitized(text, redacting: redactor, maximumLength: 1024) }
        var bytes: [UInt8] = Array(#"{"ready":"#.utf8)
        bytes += Array((snapshot.isReady ? "true" : "false").utf8)
        bytes += Array(#","reasons":"#.utf8)
        appendStrings(snapshot.reasons.map(shown), to: &bytes)
        bytes += Array(#","connected":\#(snapshot.connected),"authenticated":\#(snapshot.authenticated)"#.utf8)
        bytes += Array(#","subscriptions":{"configured":"#.utf8)
        appendStrings(snapshot.expectedSubscriptions.sorted(), to: &bytes)
        bytes += Array(#","live":"#.utf8)
        appendStrings(snapshot.liveSubscriptions.sorted(), to: &bytes)
        bytes += Array(#"},"stuck_sinks":{"#.utf8)
        for (index, sink) in snapshot.stuckSinks.keys.sorted().enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendJSONString(shown(sink), to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            appendJSONString(shown(snapshot.stuckSinks[sink] ?? ""), to: &bytes)
        }
        bytes += Array(#"},"sink_lag":{"#.utf8)
        for (index, sink) in snapshot.sinkLag.keys.sorted().enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendJSONString(sink, to: &bytes)
            bytes += Array(":\(snapshot.sinkLag[sink] ?? 0)".utf8)
        }
        bytes += Array(#"},"shutting_down":\#(snapshot.shuttingDown)}"#.utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func appendStrings(_ strings: [String], to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "["))
        for (index, string) in strings.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendJSONString(string, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }
}
