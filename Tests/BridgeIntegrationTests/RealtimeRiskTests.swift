import BridgeTestSupport
import Foundation
import Testing

/// Issue 10, the risky realtime paths end to end (real binary, emulator): a server that goes silent, a token that
/// the server expires before the bridge's own refresh, credentials that stop working after start-up.
@Suite(.serialized) struct RealtimeRiskTests {
    func stats(_ emulator: Emulator) throws -> [String: Any] { try emulator.controlGet("stats") }

    func count(_ text: String, in bridge: BridgeProcess) -> Int {
        bridge.stderr.components(separatedBy: text).count - 1
    }

    @Test func aSilentServerIsLeftWithinTwiceTheHeartbeatAndDeliveryResumes() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        // heartbeat 2s (liveConfig): dead after 4 s without traffic. No other timeout could end a hung connection
        // within the test's deadlines: connecting and requests may take a minute.
        let bridge = try BridgeProcess.run(
            config: liveConfig(
                url: emulator.url, directusExtra: "  connect_timeout: 60s\n  request_timeout: 60s",
                subscriptions: "  - collection: articles"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.create("articles", ["title": "before the silence"])
        #expect(bridge.waitUntil { $0.events.count == 1 })

        // TCP stays open and nothing arrives: no pings, no pongs, no events, no close.
        try emulator.control("settings", ["silent": true])
        let silentSince = Date()
        try emulator.create("articles", ["title": "during the silence"])  // its event is swallowed too
        let detected = bridge.waitUntil(timeout: 30) { count("no traffic for twice the heartbeat", in: $0) >= 1 }
        let detectedAfter = Date().timeIntervalSince(silentSince)
        #expect(detected, "the silent connection was never given up: \(bridge.stderr)")
        // The contract's 2 × heartbeat (4 s) from the last traffic, which came before the silence began; the rest
        // is margin for a loaded machine, stretched by the patience factor (a deadline, not a window).
        #expect(detectedAfter < 4 + TestEnvironment.patient(4), "given up only after \(detectedAfter) s")
        // A new connection is upgraded but hears nothing either, not even `auth ok`: it is given up the same way.
        #expect(
            bridge.waitUntil(timeout: 30) { count("no traffic for twice the heartbeat", in: $0) >= 2 },
            "\(bridge.stderr)")
        #expect((try stats(emulator))["connections_total"] as? Int ?? 0 >= 2)
        #expect(bridge.isRunning)

        try emulator.control("settings", ["silent": false])
        #expect(bridge.waitUntilConnected(times: 2, timeout: 30), "\(bridge.stderr)")
        try emulator.create("articles", ["title": "after the silence"])
        #expect(bridge.waitUntil { $0.events.contains { ($0["data"] as? [String: Any])?["title"] as? String == "after the silence" } })
        // The server closed nothing: every connection that ended was given up by the bridge.
        let closes = (try stats(emulator))["closes"] as? [String: Int] ?? [:]
        #expect(Set(closes.keys).isDisjoint(with: ["heartbeat", "handshake_failed", "auth_timeout"]), "\(closes)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func tokenExpiredOnTheSocketIsRenewedInBandAndNothingIsLost() throws {
        // 15-minute tokens: the bridge's own renewal at 75 % is far away; the server expires the socket's token
        // early, three times, while changes keep coming. Each must be answered within Directus's default 10 s
        // auth timeout. A 10 s heartbeat: no reconnect for a starved moment on a loaded machine.
        let emulator = try Emulator(arguments: ["--auth-timeout", "10"])
        defer { emulator.stop() }
        let auth = "    email: admin@example.com\n    password: admin-password"
        let bridge = try BridgeProcess.run(
            config: liveConfig(url: emulator.url, auth: auth, subscriptions: "  - collection: articles")
                .replacingOccurrences(of: "heartbeat: 2s", with: "heartbeat: 10s"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let authOKAtStart = (try stats(emulator))["auth_ok"] as? Int ?? 0

        try emulator.control("generator", ["collection": "articles", "count": 120, "interval_ms": 50, "kind": "create"])
        for round in 1...3 {
            let answer = try emulator.control("expire-tokens", ["email": "admin@example.com"]) as? [String: Any]
            #expect(answer?["expired"] as? Int == 1, "round \(round): \(answer ?? [:])")
            // The in-band `auth` with a renewed token is answered `auth ok` on the same socket.
            #expect(
                bridge.waitUntil(timeout: 20) { _ in
                    ((try? stats(emulator))?["auth_ok"] as? Int ?? 0) >= authOKAtStart + round
                },
                "round \(round): no re-authentication: \(bridge.stderr)")
        }
        let finished = try emulator.control("generator/wait", ["timeout_ms": 60000]) as? [String: Any]
        #expect(finished?["finished"] as? Bool == true)
        #expect(bridge.waitUntil(timeout: 20) { $0.events.count >= 120 }, "\(bridge.events.count) events")
        #expect(bridge.events.count == 120)

        let counters = try stats(emulator)
        #expect(counters["tokens_expired"] as? Int == 3)
        #expect(counters["connections_total"] as? Int == 1, "the socket was reopened: \(bridge.stderr)")
        #expect((counters["closes"] as? [String: Int] ?? [:]).isEmpty, "\(counters["closes"] ?? [:])")
        #expect(count("access token expired on the socket, renewing", in: bridge) == 3)
        #expect(count("token refreshed", in: bridge) == 3, "one REST refresh per expiry")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
