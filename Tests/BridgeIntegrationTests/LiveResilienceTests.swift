import BridgeTestSupport
import Foundation
import Testing

/// Issue 3: heartbeats, token expiry, drops and refusals, hostile frames.
@Suite(.serialized) struct LiveResilienceTests {
    func stats(_ emulator: Emulator) throws -> [String: Any] { try emulator.controlGet("stats") }

    func closes(_ emulator: Emulator, _ reason: String) throws -> Int {
        ((try stats(emulator))["closes"] as? [String: Any])?[reason] as? Int ?? 0
    }

    /// The period is 1 s stretched by the patience factor, like every bound of the tests: two periods without an
    /// answer end the connection, and a loaded machine stalls the bridge or the emulator for longer than 2 s.
    @Test func aOneSecondHeartbeatHeldForTenSecondsNeedsNoReconnect() throws {
        let period = TestEnvironment.patient(1)
        let emulator = try Emulator(arguments: ["--heartbeat-period", String(period)])
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: liveConfig(url: emulator.url)
                .replacingOccurrences(of: "heartbeat: 2s", with: "heartbeat: \(Int(period * 1000))ms"))
        #expect(bridge.waitUntilConnected())
        // Eight periods' pings answered, waited for instead of slept through.
        #expect(bridge.waitUntil(timeout: 12) { _ in ((try? stats(emulator))?["client_pongs"] as? Int ?? 0) >= 8 })
        let counters = try stats(emulator)
        #expect(counters["connections_total"] as? Int == 1, "reconnected: \(bridge.stderr)")
        #expect(try closes(emulator, "heartbeat") == 0)
        #expect((counters["server_pings_sent"] as? Int ?? 0) >= 8)
        #expect((counters["client_pongs"] as? Int ?? 0) >= 8)
        #expect(!bridge.stderr.contains("reconnecting"))
        // Still delivering after eight periods of heartbeats.
        try emulator.create("articles", ["title": "after heartbeats"])
        #expect(bridge.waitUntil { $0.events.count == 1 })

        // The same check fails for a bridge that stops answering: frozen, it is dropped after two periods (it then
        // reconnects on its own once thawed). It stays frozen until the emulator says so, not for a fixed time that a
        // loaded machine could let pass before the emulator's own timer ran.
        bridge.send(SIGSTOP)
        let droppedWhileFrozen = bridge.waitUntil { _ in ((try? closes(emulator, "heartbeat")) ?? 0) >= 1 }
        bridge.send(SIGCONT)
        #expect(droppedWhileFrozen, "the emulator never gave up the frozen bridge")
        #expect(bridge.waitUntilConnected(times: 2))
        #expect((try stats(emulator))["connections_total"] as? Int == 2)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    /// A 6 s token (just above the 5 s the bridge plans with at least: docs/RELIABILITY.md) is
    /// renewed at 4.5 s, before it expires, three times while changes stream for 15 s.
    @Test func aShortTokenIsRefreshedBeforeItExpiresAndNothingIsLost() throws {
        // The auth deadline stretched by the patience factor; the token's 6 s is what the test is about (just above
        // the bridge's 5 s planning floor, three renewals in 15 s), so it stays.
        let emulator = try Emulator(arguments: [
            "--token-ttl-ms", "6000", "--auth-timeout", String(TestEnvironment.patient(1)),
        ])
        defer { emulator.stop() }
        let auth = "    email: admin@example.com\n    password: admin-password"
        let bridge = try BridgeProcess.run(config: liveConfig(url: emulator.url, auth: auth))
        #expect(bridge.waitUntilConnected())
        // Changes every 100 ms for 15 s.
        try emulator.control(
            "generator", ["collection": "articles", "count": 150, "interval_ms": 100, "kind": "create"])
        try emulator.control("generator/wait", ["timeout_ms": 45000])
        #expect(bridge.waitUntil(timeout: 5) { $0.events.count >= 150 })
        #expect(bridge.events.count == 150)
        #expect((try stats(emulator))["connections_total"] as? Int == 1, "the socket was reopened: \(bridge.stderr)")
        #expect(try closes(emulator, "auth_timeout") == 0)
        #expect(bridge.stderr.components(separatedBy: "token refreshed").count - 1 >= 3)
        #expect(!bridge.stderr.contains("admin-password"))
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func dropsAndRefusedUpgradesReconnectAndResubscribe() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(config: liveConfig(url: emulator.url))
        #expect(bridge.waitUntilConnected())
        try emulator.control("drop", ["reset": true])
        #expect(bridge.waitUntilConnected(times: 2))
        try emulator.control("drop", ["reset": false])
        #expect(bridge.waitUntilConnected(times: 3))
        try emulator.control("refuse-upgrades", ["ms": 3000, "status": 503])
        try emulator.control("drop", ["reset": true])
        #expect(bridge.waitUntilConnected(times: 4, timeout: 15))
        #expect(bridge.stderr.contains("HTTP 503") || bridge.stderr.contains("503"))
        try emulator.create("articles", ["title": "after the outage"])
        try emulator.rest("POST", "/items/tags", ["slug": "later", "label": "Later"])
        #expect(bridge.waitUntil { $0.events.count == 2 }, "\(bridge.stderr)")
        let subscriptions = (try stats(emulator))["subscriptions"] as? [[String: Any]] ?? []
        #expect(subscriptions.count == 2)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func hostileFramesNeitherCrashNorStopDelivery() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(config: liveConfig(url: emulator.url))
        #expect(bridge.waitUntilConnected())
        try emulator.control("send", ["kind": "non_json"])
        try emulator.control("send", ["kind": "json", "message": ["type": "subscription", "event": "create"]])
        try emulator.control("send", ["kind": "invalid_utf8"])
        #expect(bridge.waitUntilConnected(times: 2), "no reconnect after invalid UTF-8: \(bridge.stderr)")
        // A message over the limit is read past on the same connection (OversizedSocketMessageTests).
        try emulator.control("send", ["kind": "oversize", "size": 17 * 1024 * 1024])
        #expect(bridge.waitUntil { _ in bridge.stderr.contains("skipped a WebSocket message") }, "\(bridge.stderr)")
        try emulator.create("articles", ["title": "still here"])
        #expect(bridge.waitUntil { $0.events.count == 1 })
        #expect(bridge.isRunning)
        #expect(bridge.stderr.contains("1007") && !bridge.stderr.contains("1009"))
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}

/// Issue 3: start-up failures exit with the contract's codes and say why.
@Suite(.serialized) struct StartupFailureTests {
    @Test func aWrongPasswordExits77WithinSeconds() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let auth = "    email: admin@example.com\n    password: not-the-password"
        let started = Date()
        let bridge = try BridgeProcess.run(config: liveConfig(url: emulator.url, auth: auth))
        #expect(bridge.waitForExit(timeout: 10) == 77)
        #expect(Date().timeIntervalSince(started) < TestEnvironment.patient(10), "a retry would never exit")
        #expect(bridge.stderr.contains("INVALID_CREDENTIALS"))
        #expect(!bridge.stderr.contains("not-the-password"))
    }

    @Test(arguments: [
        ("subscriptions:\n  - colection: articles", "bridge.yaml:2:5: unknown key \"colection\" (did you mean \"collection\"?)"),
        ("directus:\n  auth:\n    token: x\nsubscriptions:\n  - collection: a\nsinks:\n  - type: ndjson",
            "bridge.yaml:2:3: missing required key \"url\" in directus"),
        ("directus:\n  url: http://x\n  auth:\n    token: ${BRIDGE_TEST_UNDEFINED}\nsubscriptions:\n  - collection: a\nsinks:\n  - type: ndjson",
            "bridge.yaml:4:12"),
        ("directus:\n  url: http://x\n  auth:\n    token: t\nsubscriptions:\n  - collection: a\nsinks:\n"
            + "  - type: webhook\n    url: http://h\n    headers:\n      X-Token: \"a\\rb\"",
            "bridge.yaml:11:16: sinks[0].headers.X-Token: a header value must be one line"),
    ])
    func configurationErrorsExit78WithLineAndColumn(yaml: String, expected: String) throws {
        let dir = try TestEnvironment.makeTemporaryDirectory()
        try yaml.write(to: dir.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        for command in ["run", "validate"] {
            let bridge = try BridgeProcess(arguments: [command, "--config", "bridge.yaml"], directory: dir)
            #expect(bridge.waitForExit() == 78)
            #expect(bridge.stderr.contains(expected), "\(command): \(bridge.stderr)")
        }
    }

    @Test func anUnknownCollectionIsNamedInAClearError() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        // A non-admin gets INVALID_COLLECTION for a collection that does not exist (docs/directus-protocol.md §5.2).
        let bridge = try BridgeProcess.run(
            config: liveConfig(
                url: emulator.url, auth: "    token: reader-static-token",
                subscriptions: "  - collection: artcles\n  - collection: articles"))
        #expect(bridge.waitUntilConnected())
        #expect(bridge.stderr.contains("INVALID_COLLECTION"))
        #expect(bridge.stderr.contains("subscription refused: collection \"artcles\" does not exist"), "\(bridge.stderr)")
        try emulator.create("articles", ["title": "the other subscription works"])
        #expect(bridge.waitUntil { $0.events.count == 1 })
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
