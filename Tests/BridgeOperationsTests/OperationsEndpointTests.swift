import BridgeConfig
import BridgeHTTPServer
import BridgeJSON
import BridgeSystem
import Testing

@testable import BridgeActivity
@testable import BridgeCore
@testable import BridgeDirectus
@testable import BridgeEvents
@testable import BridgeSinks

@Suite struct OperationsEndpointTests {
    func makeHealth() -> HealthState { HealthState(expectedSubscriptions: ["articles", "tags"]) }

    func call(_ routes: [String: HTTPRouteHandler], _ path: String) throws -> HTTPServerResponse {
        let handler = try #require(routes[path])
        return handler(HTTPServerRequest(method: "GET", path: path))
    }

    @Test func readyzIs503WithReasonsUntilEverythingIsUp() throws {
        let health = makeHealth()
        let routes = OperationsServer.routes(registry: MetricsRegistry(), health: health)
        let starting = try call(routes, "/readyz")
        #expect(starting.status == 503)
        #expect(starting.contentType == "application/json")
        let body = try JSONValue.parse(starting.body)
        #expect(body["ready"]?.boolValue == false)
        let reasons = body["reasons"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(
            reasons == [
                "not connected to Directus", "credentials not accepted",
                "subscriptions not initialised: articles, tags",
            ]
        )
        #expect(body["subscriptions"]?["configured"]?.arrayValue?.compactMap(\.stringValue) == ["articles", "tags"])

        health.update {
            $0.connected = true
            $0.authenticated = true
            $0.liveSubscriptions = ["articles", "tags"]
        }
        let ready = try call(routes, "/readyz")
        #expect(ready.status == 200)
        #expect(try JSONValue.parse(ready.body)["ready"]?.boolValue == true)

        health.update { $0.stuckSinks["webhook"] = "HTTP 503 from the receiver" }
        let stuck = try JSONValue.parse(try call(routes, "/readyz").body)
        #expect(stuck["ready"]?.boolValue == false)
        #expect(stuck["stuck_sinks"]?["webhook"]?.stringValue == "HTTP 503 from the receiver")

        health.update {
            $0.stuckSinks = [:]
            $0.shuttingDown = true
        }
        #expect(try call(routes, "/readyz").status == 503)
        #expect(try call(routes, "/healthz").status == 200)
    }

    @Test func readyzRedactsSecrets() throws {
        let health = makeHealth()
        health.update {
            $0.lastDisconnectReason = "upgrade refused for token sup3r-secret-token"
        }
        let routes = OperationsServer.routes(
            registry: MetricsRegistry(),
            health: health,
            redactor: Redactor(secrets: ["sup3r-secret-token"])
        )
        let text = String(decoding: try call(routes, "/readyz").body, as: UTF8.self)
        #expect(!text.contains("sup3r-secret-token"))
        #expect(text.contains("[REDACTED]"))
    }

    /// Issue 23, item 4: the body is JSON; a secret with a quote or a backslash is hidden before it is escaped.
    @Test func readyzRedactsASecretWithAQuoteAndABackslash() throws {
        let secret = #"tok"en\1234"#
        let health = makeHealth()
        health.update {
            $0.lastDisconnectReason = "proxy answered 503: bad token \(secret)"
            $0.stuckSinks["webhook"] = "receiver echoed \(secret)"
        }
        let routes = OperationsServer.routes(
            registry: MetricsRegistry(),
            health: health,
            redactor: Redactor(secrets: [secret])
        )
        let text = String(decoding: try call(routes, "/readyz").body, as: UTF8.self)
        #expect(!text.contains(#"tok\"en\\1234"#) && !text.contains(secret), "\(text)")
        #expect(text.ranges(of: "[REDACTED]").count >= 2, "\(text)")
    }

    @Test func metricsUseThePrometheusContentType() throws {
        let registry = MetricsRegistry()
        let health = makeHealth()
        OperationsMetrics.register(in: registry, health: health, build: BuildInfo(version: "1.2.3", commit: "abc"))
        let response = try call(OperationsServer.routes(registry: registry, health: health), "/metrics")
        #expect(response.status == 200)
        #expect(response.contentType == "text/plain; version=0.0.4; charset=utf-8")
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.contains(#"directus_bridge_build_info{version="1.2.3",commit="abc"} 1"#))
        #expect(text.contains("directus_bridge_connected 0\n"))
        #expect(text.contains("directus_bridge_ready 0\n"))
        #expect(text.contains("directus_bridge_subscriptions_configured 2\n"))
        health.update { $0.connected = true }
        #expect(registry.render().contains("directus_bridge_connected 1\n"))
    }

    @Test func servedOverHTTPOnAFreePort() async throws {
        let health = makeHealth()
        let logger = Logger.silent
        let start = try await OperationsServer.start(
            HTTPConfig(listen: ListenAddress(host: "127.0.0.1", port: 0)),
            registry: MetricsRegistry(),
            health: health,
            redactor: Redactor(),
            logger: logger
        )
        guard case .listening(let server) = start else {
            Issue.record("not listening: \(start)")
            return
        }
        #expect(server.port > 0)
        let address = server.boundAddresses[0]
        let received: Result<[UInt8], any Error>
        do {
            received = .success(try await BlockingExecutor.shared.perform { try Self.readyz(at: address) })
        } catch {
            received = .failure(error)
        }
        await server.close()  // awaited on every path, as the runtime does
        let text = String(decoding: try received.get(), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 503"))
        #expect(text.contains(#""ready":false"#))
    }

    /// The bytes of a `GET /readyz` on a new connection, until the server closes it (blocking: a socket's waits).
    static func readyz(at address: SocketAddress) throws -> [UInt8] {
        let client = try Socket.connect(to: address, deadline: .now + .seconds(5))
        let request = Array("GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
        _ = try request.withUnsafeBytes { try client.send($0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now + .seconds(5)
        reading: while try client.wait(for: .readable, until: deadline) {
            switch try buffer.withUnsafeMutableBytes({ try client.receive(into: $0) }) {
            case .transferred(let count): received += buffer[..<count]
            case .wouldBlock: continue
            case .endOfStream: break reading
            }
        }
        return received
    }
}
