import BridgeTestSupport
import Foundation
import Testing

/// Issue 3: socket auth modes, re-login, NDJSON files with SIGHUP, clean shutdown.
@Suite(.serialized) struct LiveSessionTests {
    @Test func strictModeSendsTheTokenOnTheUpgrade() throws {
        let emulator = try Emulator(arguments: ["--auth-mode", "strict"])
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: liveConfig(url: emulator.url, auth: "    token: admin-static-token\n    mode: strict")
        )
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.create("articles", ["title": "strict"])
        #expect(bridge.waitUntil { $0.events.count == 1 })
        #expect(!bridge.stderr.contains("admin-static-token"))
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func publicModeNeedsNoCredentials() throws {
        let emulator = try Emulator(arguments: ["--auth-mode", "public"])
        defer { emulator.stop() }
        try emulator.control("permissions", ["role": "public", "collection": "articles", "actions": ["read"]])
        let bridge = try BridgeProcess.run(
            config: liveConfig(url: emulator.url, auth: "    mode: public", subscriptions: "  - collection: articles")
        )
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.create("articles", ["title": "public"])
        #expect(bridge.waitUntil { $0.events.count == 1 })
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func aRevokedRefreshTokenLeadsToAFreshLogin() throws {
        // The token's life and the socket's auth deadline stretched by the patience factor: at 1.5 s and 1 s a
        // loaded machine missed them before the revocation was even noticed.
        let emulator = try Emulator(arguments: [
            "--token-ttl-ms", String(Int(TestEnvironment.patient(1.5) * 1000)),
            "--auth-timeout", String(TestEnvironment.patient(1)),
        ])
        defer { emulator.stop() }
        let auth = "    email: admin@example.com\n    password: admin-password"
        let bridge = try BridgeProcess.run(config: liveConfig(url: emulator.url, auth: auth))
        #expect(bridge.waitUntilConnected())
        try emulator.control("users/revoke", ["email": "admin@example.com"])
        #expect(bridge.waitForLog("refresh token refused, logging in again", timeout: 5), "\(bridge.stderr)")
        #expect(bridge.waitUntil(timeout: 5) { $0.stderr.components(separatedBy: "logged in").count - 1 >= 2 })
        try emulator.create("articles", ["title": "after the re-login"])
        #expect(bridge.waitUntil { $0.events.count == 1 })
        #expect(bridge.isRunning)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func aFileSinkIsReopenedOnSIGHUPForLogrotate() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let config = liveConfig(url: emulator.url, subscriptions: "  - collection: articles")
            .replacingOccurrences(of: "path: \"-\"", with: "path: events.ndjson\n    fsync: always")
        let bridge = try BridgeProcess.run(config: config)
        #expect(bridge.waitUntilConnected())
        let file = bridge.directory.appendingPathComponent("events.ndjson")
        try emulator.create("articles", ["title": "before rotation"])
        #expect(bridge.waitUntil { _ in ((try? String(contentsOf: file, encoding: .utf8)) ?? "").contains("before") })
        try FileManager.default.moveItem(at: file, to: bridge.directory.appendingPathComponent("events.ndjson.1"))
        // The changes follow the signal at once: the reopen happens when the signal arrives, so none of them may
        // land in the rotated file (which logrotate may compress or delete).
        #expect(bridge.sendAndWaitUntilTaken(SIGHUP))
        for n in 0..<5 { try emulator.create("articles", ["title": "after rotation \(n)"]) }
        #expect(
            bridge.waitUntil { _ in
                ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n").count == 5
            },
            "\(bridge.stderr.suffix(2000))"
        )
        #expect(bridge.waitForLog("reopened output files"))
        let rotated = try String(
            contentsOf: bridge.directory.appendingPathComponent("events.ndjson.1"),
            encoding: .utf8
        )
        #expect(rotated.split(separator: "\n").count == 1, "\(rotated)")
        #expect(bridge.lines.isEmpty)  // stdout carries nothing when the sink is a file
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    /// The JSON log copy too: once SIGHUP has been delivered, no later line goes to the file logrotate moved.
    @Test func theJSONLogCopyIsReopenedOnSIGHUPForLogrotate() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "log-copy-rotation")
        let copy = directory.appendingPathComponent("bridge.json")
        let rotated = directory.appendingPathComponent("bridge.json.1")
        let bridge = try BridgeProcess.run(
            config: liveConfig(url: emulator.url, subscriptions: "  - collection: articles"),
            in: directory,
            environment: ["DIRECTUS_BRIDGE_JSON_LOG_FILE": copy.path]
        )
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try FileManager.default.moveItem(at: copy, to: rotated)
        bridge.send(SIGHUP)
        // Logged by the sink's runner after it saw the signal, so after the signal was delivered.
        #expect(bridge.waitForLog("reopened output files"), "\(bridge.stderr.suffix(2000))")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        let before = try String(contentsOf: rotated, encoding: .utf8)
        let after = try String(contentsOf: copy, encoding: .utf8)
        #expect(before.contains(#""message":"starting""#), "\(before)")
        for message in ["reopened output files", "shutting down", "stopped"] {
            #expect(after.contains(#""message":"\#(message)""#), "\(message) not in the new file: \(after)")
            #expect(!before.contains(#""message":"\#(message)""#), "\(message) in the moved file: \(before)")
        }
        let mode = try FileManager.default.attributesOfItem(atPath: copy.path)[.posixPermissions] as? Int
        #expect(mode.map { $0 & 0o777 } == 0o600)
    }

    @Test func shutdownUnsubscribesAndClosesWith1000() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(config: liveConfig(url: emulator.url))
        #expect(bridge.waitUntilConnected())
        bridge.send(SIGINT)
        #expect(bridge.waitForExit() == 0)
        let stats = try emulator.controlGet("stats")
        #expect((stats["client_close_codes"] as? [String: Any])?["1000"] as? Int == 1, "\(stats)")
        #expect((stats["messages_received"] as? Int ?? 0) >= 4)  // 2 subscribes + 2 unsubscribes at least
        #expect(bridge.stderr.contains("stopped"))
    }

    @Test func anOTPLoginWorks() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let otp = try emulator.controlGet("otp?email=otp@example.com")["otp"] as? String ?? ""
        let auth = "    email: otp@example.com\n    password: otp-password\n    otp: \"\(otp)\""
        let bridge = try BridgeProcess.run(
            config: liveConfig(url: emulator.url, auth: auth, subscriptions: "  - collection: articles")
        )
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func aForbiddenSubscriptionIsRetriedUntilAccessIsGranted() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: liveConfig(
                url: emulator.url,
                auth: "    token: reader-static-token",
                subscriptions: "  - collection: secrets\n  - collection: articles"
            )
        )
        #expect(bridge.waitUntilConnected())
        #expect(bridge.stderr.contains("FORBIDDEN"), "\(bridge.stderr)")
        try emulator.control("permissions", ["role": "reader", "collection": "secrets", "actions": ["read"]])
        #expect(bridge.waitForLog("directus.subscription.uid=secrets", timeout: 5))
        #expect(
            bridge.waitUntil(timeout: 5) {
                $0.stderr.contains("INFO  subscribed") && $0.stderr.contains("uid=secrets\n")
            }
        )
        try emulator.create("secrets", ["value": "now visible"])
        #expect(
            bridge.waitUntil { $0.events.contains { $0["collection"] as? String == "secrets" } },
            "\(bridge.stderr)"
        )
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
