import BridgeSystem
import BridgeTLS
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeWebSocket

/// `WebSocketOptions.proxy`: the socket opens a `CONNECT` tunnel through the configured proxy
/// (Tests/tools/http_peers/tunnel_proxy.py) and speaks to the origin through it — TLS included — as it does directly;
/// a refusal names the proxy as URLs are shown, never its credentials; a hostile proxy (endless header, huge line,
/// no answer) ends the attempt within its bounds (issue 23, "Proxies").
@Suite(.serialized, .timeLimit(.minutes(3)))  // its own peers start slowly on a loaded box (docs/RELIABILITY.md)
struct ProxyConnectionTests {
    private func startProxy(_ arguments: [String] = []) async throws -> PythonServer {
        try await PythonServer.start(script: "http_peers/tunnel_proxy.py", arguments: arguments)
    }

    @Test func plainAndTLSSocketsTunnelThroughTheProxy() async throws {
        let proxy = try await startProxy(["--require", "bob:p@ss:word"])
        try await withServer(proxy) {
            let through = HTTPProxy(host: "127.0.0.1", port: proxy.port, user: "bob", password: "p@ss:word")

            let echo = try await Peers.echo()
            let plain = try await connect("ws://127.0.0.1:\(echo.port)/", options: WebSocketOptions(proxy: through))
            try await plain.send(text: "through the tunnel")
            #expect(try await plain.next() == .text(Array("through the tunnel".utf8)))
            #expect(await plain.close().code == 1000)

            let certificates = try await TestCertificates.make(hosts: ["localhost"])
            let secureServer = try await certificates.startServer()
            try await withServer(secureServer) {
                let options = WebSocketOptions(tls: TLSConfiguration(caFile: certificates.ca), proxy: through)
                let secure = try await connect("wss://localhost:\(secureServer.port)/", options: options)
                try await secure.send(text: "TLS inside the tunnel")
                #expect(try await secure.next() == .text(Array("TLS inside the tunnel".utf8)))
                #expect(await secure.close().code == 1000)

                let seen = await pollUntil(timeout: .seconds(10)) {
                    proxy.log.contains("TUNNEL 127.0.0.1:\(echo.port) user=bob first=GET / HTTP/1.1")
                        && proxy.log.contains("TUNNEL localhost:\(secureServer.port) user=bob first=TLS")
                }
                #expect(seen, "\(proxy.log)")
            }
        }
    }

    @Test(arguments: [407, 403])
    func aRefusedConnectIsAClearErrorNamingTheProxy(status: Int) async throws {
        let proxy = try await startProxy(
            status == 407 ? ["--require", "bob:right"] : ["--mode", "refuse", "--status", "403"]
        )
        try await withServer(proxy) {
            let options = WebSocketOptions(
                proxy: HTTPProxy(host: "127.0.0.1", port: proxy.port, user: "bob", password: "wrong-secret")
            )
            let error = try #require(await connectError("ws://127.0.0.1:9/websocket", options: options))
            #expect(error.kind == .proxyRefused)
            #expect(error.status == status)
            #expect(error.isRetriable == (status != 407))
            let text = "\(error)"
            #expect(
                text.hasPrefix(
                    "proxy http://127.0.0.1:\(proxy.port) refused CONNECT 127.0.0.1:9 with HTTP \(status) Refused by test proxy"
                ),
                "\(text)"
            )
            #expect(!text.contains("wrong-secret") && !text.contains("bob"), "\(text)")
        }
    }

    /// A proxy that sends an endless header or one endless line is cut off at `ProxyTunnel.maxAnswerBytes`, long
    /// before the connect timeout; one that never answers costs the connect timeout and no more.
    @Test(arguments: ["endless-header", "huge-line", "silent"])
    func aHostileProxyNeitherHangsNorIsReadWithoutBound(mode: String) async throws {
        let proxy = try await startProxy(["--mode", mode])
        try await withServer(proxy) {
            let timeout = Duration.seconds(2) * TestEnvironment.patience
            let options = WebSocketOptions(
                connectTimeout: timeout,
                proxy: HTTPProxy(host: "127.0.0.1", port: proxy.port)
            )
            let started = ContinuousClock.now
            let error = try #require(await connectError("ws://127.0.0.1:9/websocket", options: options))
            let elapsed = ContinuousClock.now - started
            #expect(elapsed < timeout + .seconds(2), "took \(elapsed)")
            if mode == "silent" {
                #expect(error.kind == .timeout, "\(error)")
                #expect("\(error)" == "proxy http://127.0.0.1:\(proxy.port) did not answer CONNECT 127.0.0.1:9 in time")
            } else {
                #expect(error.kind == .invalidHandshake, "\(error)")
                #expect("\(error)".contains("longer than \(ProxyTunnel.maxAnswerBytes) bytes"), "\(error)")
                // The proxy stopped writing when the bridge closed: it got no further than the socket buffers hold.
                #expect(await pollUntil(timeout: .seconds(10)) { proxy.log.contains("WROTE") }, "\(proxy.log)")
            }
        }
    }
}
