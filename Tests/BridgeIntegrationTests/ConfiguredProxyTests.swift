import BridgeTestSupport
import Foundation
import Testing

/// `directus.proxy` and a webhook sink's `proxy` (issue 23, "Proxies"): the bridge reaches Directus and receivers
/// through the proxy the file names and no other — REST, the socket and webhooks tunnel through
/// Tests/tools/http_peers/tunnel_proxy.py, while `http_proxy` and `NO_PROXY` in the environment change nothing; a
/// proxy that refuses the tunnel is a clear error naming it as `http://host:port`, without its password.
@Suite(.serialized) struct ConfiguredProxyTests {
    /// A live-mode configuration; `proxy` is `directus.proxy` (nil: none).
    private func config(directus: String, proxy: String?, sinks: String) -> String {
        """
        directus:
          url: \(directus)\(proxy.map { "\n  proxy: \($0)" } ?? "")
          connect_timeout: 5s
          reconnect: { initial_delay: 200ms, max_delay: 1s }
          auth:
            token: admin-static-token
        subscriptions:
          - collection: articles
        delivery:
          mode: live
        sinks:
        \(sinks)
        log:
          level: debug
        """
    }

    @Test func restAndTheSocketTunnelThroughTheConfiguredProxyOnly() throws {
        let proxy = try PythonServer(script: "http_peers/tunnel_proxy.py", arguments: ["--require", "bridge:pr0xy-pw"])
        defer { proxy.stop() }
        let unchosen = try PythonServer(script: "http_peers/counting_proxy.py")
        defer { unchosen.stop() }
        let emulator = try Emulator()
        defer { emulator.stop() }
        let environment = proxyEnvironment("http://127.0.0.1:\(unchosen.port)", noProxy: "127.0.0.1,localhost")
        let bridge = try BridgeProcess.run(
            config: config(
                directus: emulator.url, proxy: "http://bridge:pr0xy-pw@127.0.0.1:\(proxy.port)",
                sinks: "  - type: ndjson\n    path: \"-\""),
            environment: environment)
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr.suffix(3000))\n\(proxy.log)")
        try emulator.create("articles", ["title": "through the proxy"])
        #expect(bridge.waitUntil(timeout: 30) { $0.events.contains { $0["collection"] as? String == "articles" } })
        let origin = "127.0.0.1:\(emulator.server.port)"
        let tunnels = proxy.log.split(separator: "\n").filter { $0.hasPrefix("TUNNEL \(origin) user=bridge first=") }
        #expect(tunnels.contains { $0.contains("first=GET /websocket HTTP/1.1") }, "\(proxy.log)")
        #expect(tunnels.contains { !$0.contains("/websocket") }, "no REST request went through the proxy: \(proxy.log)")
        #expect(!unchosen.log.contains("PROXIED"), "went through the environment's proxy: \(unchosen.log)")
        #expect(!bridge.stderr.contains("pr0xy-pw"))
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func aRefusedTunnelIsAClearErrorNamingTheProxyOnly() throws {
        let proxy = try PythonServer(script: "http_peers/tunnel_proxy.py", arguments: ["--require", "proxyuser:right"])
        defer { proxy.stop() }
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: config(
                directus: emulator.url, proxy: "http://proxyuser:wr0ng-pw@127.0.0.1:\(proxy.port)",
                sinks: "  - type: ndjson\n    path: \"-\""))
        defer {
            bridge.send(SIGKILL)
            _ = bridge.waitForExit()
        }
        let shown = "http://127.0.0.1:\(proxy.port)"
        #expect(bridge.waitUntil(timeout: 30) { $0.stderr.contains("407") && $0.stderr.contains(shown) },
            "\(bridge.stderr.suffix(3000))")
        #expect(!bridge.stderr.contains("wr0ng-pw"), "\(bridge.stderr.suffix(3000))")
        #expect(!bridge.stderr.contains("proxyuser"), "\(bridge.stderr.suffix(3000))")
    }

    /// A webhook sink's own `proxy`: its deliveries tunnel through that proxy (the environment's is ignored), while
    /// Directus, without `directus.proxy`, is reached directly; the password never reaches the log.
    @Test func aWebhookSinkDeliversThroughItsOwnProxy() throws {
        let proxy = try PythonServer(script: "http_peers/tunnel_proxy.py", arguments: ["--require", "hooks:h00k-pw"])
        defer { proxy.stop() }
        let unchosen = try PythonServer(script: "http_peers/counting_proxy.py")
        defer { unchosen.stop() }
        let emulator = try Emulator()
        defer { emulator.stop() }
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let sinks = """
              - name: hooks
                type: webhook
                url: \(receiver.hookURL())
                proxy: http://hooks:h00k-pw@127.0.0.1:\(proxy.port)
            """
        let environment = proxyEnvironment("http://127.0.0.1:\(unchosen.port)", noProxy: "")
        let bridge = try BridgeProcess.run(
            config: config(directus: emulator.url, proxy: nil, sinks: sinks), environment: environment)
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr.suffix(3000))\n\(proxy.log)")
        try emulator.create("articles", ["title": "through the sink's proxy"])
        #expect(
            bridge.waitUntil(timeout: 30) { _ in ((try? receiver.requests()) ?? []).contains(where: \.delivered) },
            "\(bridge.stderr.suffix(3000))\n\(proxy.log)")
        let receiverOrigin = "127.0.0.1:\(URL(string: receiver.hookURL())!.port!)"
        // The proxy prints a tunnel's line after it forwarded the first bytes, so the delivery can be seen first.
        _ = bridge.waitUntil(timeout: 10) { _ in proxy.log.contains("TUNNEL \(receiverOrigin) user=hooks first=") }
        let tunnels = proxy.log.split(separator: "\n").filter { $0.hasPrefix("TUNNEL ") }
        #expect(
            tunnels.contains { $0.hasPrefix("TUNNEL \(receiverOrigin) user=hooks first=POST /hook") }, "\(proxy.log)")
        #expect(!tunnels.contains { $0.contains(":\(emulator.server.port) ") }, "Directus went through: \(proxy.log)")
        #expect(!unchosen.log.contains("PROXIED"), "went through the environment's proxy: \(unchosen.log)")
        #expect(!bridge.stderr.contains("h00k-pw"))
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
