import BridgeTestSupport
import Foundation
import Testing

/// Real Directus does not report every write on its socket (docs/directus-protocol.md §14.1, §14.2): the real binary
/// against the emulator's knobs for lost events, writes without events and several Directus instances.
@Suite(.serialized) struct RealWorldEventTests {
    /// §14.1: a create whose socket message is lost, and a Flow without "Emit Events" running with a user's
    /// permissions, are both in the activity log: activity mode delivers them without any socket event (its poll).
    /// A Flow with full access records nothing: nothing to deliver.
    @Test func activityModeDeliversTrackedWritesWhoseSocketEventNeverCame() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: activityConfig(url: emulator.url, pollInterval: "1s", subscriptions: "  - collection: articles"))
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")
        #expect(bridge.stderr.contains("activity mode delivers every write Directus records in its activity log"))

        try emulator.control("lose-events", ["action": "create", "count": 1])
        let lost = try emulator.create("articles", ["title": "its event is lost"])
        try emulator.control(
            "write",
            [
                "collection": "articles", "action": "update", "keys": [1], "data": ["title": "flow as a user"],
                "as": "reader@example.com", "emit_events": false,
            ])
        try emulator.control(
            "write",
            [
                "collection": "articles", "action": "update", "keys": [2], "data": ["title": "flow, full access"],
                "as": NSNull(), "emit_events": false,
            ])
        let stats = try emulator.controlGet("stats")
        #expect(stats["events_lost"] as? Int == 1 && stats["events_sent"] as? Int == 0, "no socket event at all")
        let recorded = try emulator.activityIDs(["articles"]).map { "act_\($0)" }
        #expect(recorded.count == 2, "the full-access write has no activity row")

        // No further write: only the reader's own poll can find these two.
        #expect(bridge.waitUntil(timeout: 10) { $0.eventIDs == recorded }, "got \(bridge.lines): \(bridge.stderr)")
        let summary = bridge.events.map { "\($0["event"]!) \($0["key"]!)" }
        #expect(summary == ["create \(lost)", "update 1"])

        // A later write with its event arrives after them; the full-access write never does.
        let later = try emulator.create("articles", ["title": "later"])
        #expect(bridge.waitUntil { $0.events.last?["key"] as? String == later })
        #expect(!bridge.events.contains { $0["key"] as? String == "2" })
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    /// §14.1: live mode can only pass on what the socket says. It warns at start which writes it cannot see, and a
    /// lost event or a write without events costs that change only: the stream goes on.
    @Test func liveModeStatesItsGuaranteeAndGoesOnAfterEventsThatNeverCame() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: liveConfig(url: emulator.url, subscriptions: "  - collection: articles"))
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")
        let warning = bridge.stderr.split(separator: "\n").first { $0.contains("live mode delivers only") } ?? ""
        // One line (issue 25: it was a 400-character paragraph); the README has the details.
        for part in [" WARN ", "while the bridge is connected", "delivery.mode: activity", "Which writes each mode"] {
            #expect(warning.contains(part), "\(part) missing in: \(warning)")
        }

        try emulator.control("lose-events", ["action": "create", "count": 1])
        let lost = try emulator.create("articles", ["title": "its event is lost"])
        try emulator.control(
            "write",
            [
                "collection": "articles", "action": "update", "keys": [1], "data": ["title": "flow"],
                "as": "reader@example.com", "emit_events": false,
            ])
        let seen = try emulator.create("articles", ["title": "seen"])
        #expect(bridge.waitUntil { $0.events.contains { $0["key"] as? String == seen } }, "\(bridge.stderr)")
        // The emulator sends events in commit order: anything for the earlier writes would have come first.
        #expect(bridge.events.map { "\($0["event"]!) \($0["key"]!)" } == ["create \(seen)"], "not \(lost) or 1")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    /// §14.2: two Directus instances behind a load balancer without the Redis messenger. The bridge's socket is on
    /// instance 0; writes handled by instance 1 send it nothing, but they are in the shared activity log.
    @Test func activityModeDeliversWritesHandledByAnotherInstance() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let ports = try emulator.control("instances", ["count": 2]) as? [String: Any]
        #expect((ports?["ports"] as? [Int])?.count == 2)
        let bridge = try BridgeProcess.run(
            config: activityConfig(url: emulator.url, pollInterval: "1s", subscriptions: "  - collection: articles"))
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")

        let elsewhere = try emulator.control(
            "write", ["collection": "articles", "action": "create", "data": ["title": "via B"], "instance": 1])
        let key = "\(((elsewhere as? [String: Any])?["keys"] as? [Any])?.first ?? "")"
        let recorded = try emulator.activityIDs(["articles"]).map { "act_\($0)" }
        #expect(recorded.count == 1)
        #expect(bridge.waitUntil(timeout: 10) { $0.eventIDs == recorded }, "got \(bridge.lines): \(bridge.stderr)")
        #expect(bridge.events.first?["key"] as? String == key)
        #expect(try emulator.controlGet("stats")["events_sent"] as? Int == 0, "instance 0's socket heard nothing")

        let here = try emulator.create("articles", ["title": "via A"])
        #expect(bridge.waitUntil { $0.events.last?["key"] as? String == here })
        #expect(bridge.events.last?["origin"] as? String == "live")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    /// §14.2: in live mode the start-up warning says another instance's writes need the Redis messenger; with the
    /// in-process bus they are not delivered, with Redis they are.
    @Test func liveModeNeedsTheRedisMessengerForAnotherInstancesWrites() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        try emulator.control("instances", ["count": 2])
        let bridge = try BridgeProcess.run(
            config: liveConfig(url: emulator.url, subscriptions: "  - collection: articles"))
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")
        // The one-line warning points at the README's table, whose row says so (issue 25: one line, not a paragraph).
        #expect(bridge.stderr.contains(#"live mode delivers only"#) && bridge.stderr.contains("Which writes each mode"))
        let readme = try String(
            contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("another Directus instance") && readme.contains("Redis"))

        try emulator.control(
            "write", ["collection": "articles", "action": "update", "keys": [1], "data": ["title": "B"], "instance": 1])
        let here = try emulator.create("articles", ["title": "A"])
        #expect(bridge.waitUntil { $0.events.contains { $0["key"] as? String == here } }, "\(bridge.stderr)")
        #expect(bridge.events.map { "\($0["event"]!) \($0["key"]!)" } == ["create \(here)"], "nothing from B")

        try emulator.control("settings", ["messenger": "redis"])
        try emulator.control(
            "write", ["collection": "articles", "action": "update", "keys": [1], "data": ["title": "B"], "instance": 1])
        #expect(bridge.waitUntil { $0.events.last?["key"] as? String == "1" }, "\(bridge.lines)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
