import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// A local user who binds `http.listen` first must not keep the service down for good (docs/RELIABILITY.md, "A port
/// another user took first"): the unit never restarts exit 78 (`RestartPreventExitStatus=77 78`), so the bridge
/// retries the port with backoff and delivers meanwhile.
@Suite(.serialized) struct ListenRetryTests {
    @Test func aPortTakenAtStartIsServedOnceReleasedAndEventsFlowMeanwhile() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let port = try freeLoopbackPort()
        let yaml = liveConfig(url: emulator.url, rest: "http:\n  listen: 127.0.0.1:\(port)\n")
        let bridge: BridgeProcess
        do {
            let squatter = try ListeningSocket(binding: SocketAddress(ipAddress: "127.0.0.1", port: port)!)
            bridge = try BridgeProcess.run(config: yaml)
            #expect(bridge.waitForLog("cannot listen on http.listen"), "\(bridge.stderr)")
            let line = bridge.stderr.split(separator: "\n").first { $0.contains("cannot listen on http.listen") }
            let text = String(line ?? "")
            #expect(text.contains("ERROR") && text.contains("reconnect.delay="), "\(text)")
            #expect(text.contains("127.0.0.1:\(port)") && text.contains("Address already in use"), "\(text)")

            // Not ready to anyone (nothing of the bridge's answers), but it reads Directus and delivers.
            #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
            _ = try emulator.create("articles", ["title": "while the port is taken"])
            #expect(bridge.waitUntil { $0.lines.contains { $0.contains("while the port is taken") } })
            #expect(bridge.isRunning)
            withExtendedLifetime(squatter) {}  // released here: the port is free from now on
        }
        #expect(bridge.waitForLog("serving /metrics", timeout: 40), "\(bridge.stderr)")
        let ready = bridge.waitUntil { _ in (try? HTTPFetch.get("http://127.0.0.1:\(port)/readyz"))?.status == 200 }
        #expect(ready, "\(bridge.stderr)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
