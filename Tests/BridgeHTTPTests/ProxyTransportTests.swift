import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeHTTP

/// A configured proxy (`HTTPClientOptions.proxy`) carries every request of both transports — the REST client and the
/// webhook engine — through a `CONNECT` tunnel, http as https, whatever the environment says; a refusal names the
/// proxy as URLs are shown and never its credentials (issue 23, "Proxies"; Tests/tools/http_peers/tunnel_proxy.py).
@Suite(.serialized, .timeLimit(.minutes(3)))  // its own peers start slowly on a loaded box (docs/RELIABILITY.md)
struct ProxyTransportTests {
    let peer: HTTPPeer

    init() async throws {
        peer = try await HTTPPeer()
    }

    private func proxyLog(_ proxy: PythonServer, contains text: String) async -> Bool {
        await pollUntil(timeout: .seconds(10)) { proxy.log.contains(text) }
    }

    @Test(arguments: TransportKind.allCases)
    func everyRequestTunnelsThroughTheConfiguredProxy(kind: TransportKind) async throws {
        let proxy = try await PythonServer.start(
            script: "http_peers/tunnel_proxy.py",
            arguments: ["--require", "alice:s3cr:t@x"]
        )
        try await withServer(proxy) {
            let options = HTTPClientOptions(
                proxy: HTTPProxy(host: "127.0.0.1", port: proxy.port, user: "alice", password: "s3cr:t@x")
            )
            try await kind.with(options) { client in
                let response = try await client.send(
                    HTTPRequest(method: "POST", url: peer.url("/echo"), body: [1, 2, 3])
                )
                #expect(response.status == 200)
                // The origin got the request itself, not a proxy's rewrite of it: the tunnel carried it unchanged.
                #expect(!response.bodyText.lowercased().contains("proxy-authorization"), "\(response.bodyText)")
            }
            let origin = "127.0.0.1:\(peer.server.port)"
            #expect(
                await proxyLog(proxy, contains: "TUNNEL \(origin) user=alice first=POST /echo HTTP/1.1"),
                "\(proxy.log)"
            )
            #expect(!proxy.log.contains("REFUSED"), "\(proxy.log)")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRefusedTunnelNamesTheProxyAndNotItsCredentials(kind: TransportKind) async throws {
        let proxy = try await PythonServer.start(
            script: "http_peers/tunnel_proxy.py",
            arguments: ["--require", "alice:right"]
        )
        try await withServer(proxy) {
            let options = HTTPClientOptions(
                proxy: HTTPProxy(host: "127.0.0.1", port: proxy.port, user: "alice", password: "wrong-secret")
            )
            let error = try await kind.with(options) { client in
                await #expect(throws: HTTPClientError.self) {
                    _ = try await client.send(HTTPRequest(url: peer.url("/status/200")))
                }
            }
            let text = "\(error.map { "\($0)" } ?? "no error")"
            #expect(text.contains("through proxy http://127.0.0.1:\(proxy.port)"), "\(text)")
            #expect(text.contains("407"), "\(text)")
            #expect(!text.contains("wrong-secret") && !text.contains("alice"), "\(text)")
            #expect(await proxyLog(proxy, contains: "REFUSED 407 127.0.0.1:\(peer.server.port)"), "\(proxy.log)")
        }
    }
}
