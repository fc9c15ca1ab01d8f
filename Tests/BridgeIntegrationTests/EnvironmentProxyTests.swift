import BridgeTestSupport
import Foundation
import Testing

/// Issue 23, item 10: libcurl honoured `http_proxy`, `HTTPS_PROXY` and `ALL_PROXY` from the environment while the
/// WebSocket client did not, so the Directus token (REST) and webhook bodies could go through a proxy the operator
/// never chose, and the socket not. The bridge now uses no proxy at all, whatever the environment says
/// (docs/configuration.md "Proxies"): the proxy of this test (Tests/tools/http_peers/counting_proxy.py) must see
/// nothing, and Directus and the webhook receiver must see everything.
@Suite(.serialized) struct EnvironmentProxyTests {
    @Test func proxiesFromTheEnvironmentAreIgnored() throws {
        let proxy = try PythonServer(script: "http_peers/counting_proxy.py")
        defer { proxy.stop() }
        let emulator = try Emulator()
        defer { emulator.stop() }
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let environment = proxyEnvironment("http://127.0.0.1:\(proxy.port)", noProxy: "")
        let config = """
            directus:
              url: \(emulator.url)
              auth:
                token: admin-static-token
            subscriptions:
              - collection: articles
            delivery:
              mode: live
            sinks:
              - name: hooks
                type: webhook
                url: \(receiver.hookURL())
            log:
              level: debug
            """
        let bridge = try BridgeProcess.run(config: config, environment: environment)
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr.suffix(3000))")
        try emulator.create("articles", ["title": "not through the proxy"])
        #expect(
            bridge.waitUntil(timeout: 30) { _ in ((try? receiver.requests()) ?? []).contains(where: \.delivered) },
            "\(bridge.stderr.suffix(3000))")
        #expect(!proxy.log.contains("PROXIED"), "went through the proxy: \(proxy.log)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}

/// Every proxy variable libcurl reads, in both cases, set to `address`; `NO_PROXY` and `no_proxy` to `noProxy`.
func proxyEnvironment(_ address: String, noProxy: String) -> [String: String] {
    var environment: [String: String] = [:]
    for name in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
        environment[name] = address
    }
    for name in ["no_proxy", "NO_PROXY"] { environment[name] = noProxy }
    return environment
}
