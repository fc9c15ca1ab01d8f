import BridgeTestSupport
import Foundation
import Testing

/// Issue 10: credentials that Directus stops accepting after start-up (README.md "Credentials that stop working"): an
/// error-level log, `/readyz` 503, no exit, retries no faster than `reconnect.max_delay`, and recovery once they work
/// again.
@Suite(.serialized) struct CredentialsRiskTests {
    /// liveConfig with the operations endpoint; `reconnect.max_delay` is 1s there.
    func config(_ emulator: Emulator, auth: String) -> String {
        liveConfig(
            url: emulator.url, auth: auth, subscriptions: "  - collection: articles",
            rest: "http:\n  listen: \"127.0.0.1:0\"\n")
    }

    func readiness(_ base: String) -> FetchedResponse? { try? HTTPFetch.get(base + "/readyz") }

    /// Whether `/readyz` answers 503 saying the credentials are not accepted.
    func notReadyForCredentials(_ base: String) -> Bool {
        guard let answer = readiness(base), answer.status == 503 else { return false }
        return (answer.json["reasons"] as? [String] ?? []).contains("credentials not accepted")
    }

    /// The stderr lines containing `text`.
    func lines(_ bridge: BridgeProcess, containing text: String) -> [Substring] {
        bridge.stderr.split(separator: "\n").filter { $0.contains(text) }
    }

    /// Seconds between consecutive log lines (from their RFC 3339 timestamps).
    func gaps(_ lines: [Substring]) -> [Double] {
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let times = lines.compactMap { parser.date(from: String($0.prefix { $0 != " " })) }
        return zip(times, times.dropFirst()).map { $1.timeIntervalSince($0) }
    }

    @Test func aChangedPasswordIsAnErrorNotAnExitAndTheBridgeRecoversWhenItWorksAgain() throws {
        // Tokens of 4 s: the bridge renews every 3 s, so it meets the new password within seconds.
        let emulator = try Emulator(arguments: ["--token-ttl-ms", "4000", "--auth-timeout", "2"])
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: config(emulator, auth: "    email: admin@example.com\n    password: admin-password"))
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        #expect(bridge.waitUntil { _ in readiness(base)?.status == 200 })

        // An administrator changes the password (Directus ends the user's sessions with it).
        try emulator.control("users/password", ["email": "admin@example.com", "password": "changed-by-an-admin"])
        let refused = "Directus no longer accepts the credentials; retrying"
        #expect(bridge.waitUntil(timeout: 30) { lines($0, containing: refused).count >= 3 }, "\(bridge.stderr)")
        #expect(lines(bridge, containing: refused).allSatisfy { $0.contains(" ERROR ") })
        #expect(bridge.waitUntil(timeout: 10) { _ in notReadyForCredentials(base) }, "\(readiness(base)?.text ?? "")")
        // Retried, never faster than max_delay (1 s; a loaded machine only makes the gaps longer), and no exit.
        let spacing = gaps(lines(bridge, containing: refused))
        #expect(spacing.allSatisfy { $0 >= 0.95 }, "\(spacing)")
        #expect(bridge.isRunning)

        try emulator.control("users/password", ["email": "admin@example.com", "password": "admin-password"])
        #expect(bridge.waitForLog("credentials accepted again", timeout: 30), "\(bridge.stderr)")
        #expect(bridge.waitUntil(timeout: 30) { _ in readiness(base)?.status == 200 }, "\(readiness(base)?.text ?? "")")
        try emulator.create("articles", ["title": "after the password came back"])
        #expect(bridge.waitUntil { $0.events.contains { ($0["data"] as? [String: Any])?["title"] as? String == "after the password came back" } })
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        #expect(!bridge.stderr.contains("admin-password") && !bridge.stderr.contains("changed-by-an-admin"))
    }

    @Test func aStaticTokenRefusedAfterStartUpIsAnErrorNotAnExitAndTheBridgeRecovers() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(config: config(emulator, auth: "    token: admin-static-token"))
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        #expect(bridge.waitUntil { _ in readiness(base)?.status == 200 })

        // The user is suspended (its static token stops working); the next connection is refused.
        try emulator.control("users/status", ["email": "admin@example.com", "status": "suspended"])
        try emulator.control("drop", ["reset": true])
        let refused = "Directus no longer accepts the credentials"
        #expect(bridge.waitUntil(timeout: 30) { lines($0, containing: refused).count >= 3 }, "\(bridge.stderr)")
        #expect(lines(bridge, containing: refused).allSatisfy { $0.contains(" ERROR ") })
        #expect(bridge.waitUntil(timeout: 10) { _ in notReadyForCredentials(base) }, "\(readiness(base)?.text ?? "")")
        let spacing = gaps(lines(bridge, containing: refused))
        #expect(spacing.allSatisfy { $0 >= 0.95 }, "\(spacing)")
        #expect(bridge.isRunning)

        try emulator.control("users/status", ["email": "admin@example.com", "status": "active"])
        #expect(bridge.waitUntilConnected(times: 2, timeout: 30), "\(bridge.stderr)")
        #expect(bridge.waitUntil(timeout: 30) { _ in readiness(base)?.status == 200 }, "\(readiness(base)?.text ?? "")")
        try emulator.create("articles", ["title": "after the suspension"])
        #expect(bridge.waitUntil { $0.events.contains { ($0["data"] as? [String: Any])?["title"] as? String == "after the suspension" } })
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        #expect(!bridge.stderr.contains("admin-static-token"))
    }

    @Test func inActivityModeARefusedStaticTokenIsReportedWhileTheSocketStaysOpenAndNothingIsLost() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: config(emulator, auth: "    token: admin-static-token")
                .replacingOccurrences(of: "mode: live", with: "mode: activity\n  poll_interval: 500ms"))
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        #expect(bridge.waitUntil { _ in readiness(base)?.status == 200 })

        // Suspended: the open socket stays (Directus does not close it), but every activity read is refused.
        try emulator.control("users/status", ["email": "admin@example.com", "status": "suspended"])
        try emulator.rest("POST", "/items/articles", ["title": "during the suspension"], token: "reader-static-token")
        let refused = "Directus no longer accepts the credentials; retrying"
        #expect(bridge.waitUntil(timeout: 30) { lines($0, containing: refused).count >= 3 }, "\(bridge.stderr)")
        #expect(bridge.waitUntil(timeout: 10) { _ in notReadyForCredentials(base) }, "\(readiness(base)?.text ?? "")")
        let spacing = gaps(lines(bridge, containing: refused))
        #expect(spacing.allSatisfy { $0 >= 0.95 }, "\(spacing)")
        #expect(bridge.events.isEmpty)

        try emulator.control("users/status", ["email": "admin@example.com", "status": "active"])
        #expect(bridge.waitForLog("credentials accepted again", timeout: 30), "\(bridge.stderr)")
        #expect(bridge.waitUntil(timeout: 30) { _ in readiness(base)?.status == 200 }, "\(readiness(base)?.text ?? "")")
        // Read again from the activity log: the change made while the token was refused arrives.
        #expect(bridge.waitUntil(timeout: 30) { $0.events.count == 1 }, "\(bridge.stderr)")
        #expect((bridge.events.first?["data"] as? [String: Any])?["title"] as? String == "during the suspension")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}

