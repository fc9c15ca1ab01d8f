import BridgeTestSupport
import Foundation
import Testing

/// A bridge.yaml for the emulator at `url`, with `extra` lines appended under `directus:`.
func liveConfig(
    url: String, auth: String = "    token: admin-static-token", directusExtra: String = "",
    subscriptions: String = "  - collection: articles\n  - collection: tags", rest: String = ""
) -> String {
    """
    directus:
      url: \(url)
      auth:
    \(auth)
      heartbeat: 2s
      reconnect:
        initial_delay: 100ms
        max_delay: 1s
    \(directusExtra)
    subscriptions:
    \(subscriptions)
    delivery:
      mode: live
      state_dir: ./state
    sinks:
      - type: ndjson
        path: "-"
    log:
      level: debug
    shutdown_timeout: 5s
    \(rest)
    """
}

@Suite(.serialized) struct LiveEventTests {
    @Test func createUpdateDeleteSingleAndBatchOnTwoCollections() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(config: liveConfig(url: emulator.url))
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")

        let id = try emulator.create("articles", ["title": "one", "status": "draft"])
        try emulator.rest("PATCH", "/items/articles/\(id)", ["status": "published"])
        try emulator.rest("POST", "/items/articles", [["title": "b1"], ["title": "b2"]])
        try emulator.rest("POST", "/items/tags", ["slug": "swift", "label": "Swift"])
        try emulator.rest("PATCH", "/items/tags", ["keys": ["swift"], "data": ["label": "Swift 6"]])
        try emulator.rest("DELETE", "/items/articles/\(id)")
        try emulator.rest("DELETE", "/items/tags", ["swift"])

        #expect(bridge.waitUntil { $0.events.count >= 7 }, "got \(bridge.lines)")
        let sentinel = try emulator.create("articles", ["title": "sentinel"])
        let events = try #require(bridge.events(beforeSentinel: sentinel), "\(bridge.stderr)")
        let summary = events.map { "\($0["collection"]!) \($0["event"]!) \($0["key"]!)" }
        let expected = [
            "articles create \(id)", "articles update \(id)", "articles create \(Int(id)! + 1)",
            "articles create \(Int(id)! + 2)", "tags create swift", "tags update swift", "articles delete \(id)",
            "tags delete swift",
        ]
        #expect(summary == expected, "stderr: \(bridge.stderr)")
        // Every line carries the contract's fields.
        for event in events {
            for field in ["id", "type", "event", "collection", "key", "data", "origin", "seq", "time", "received_at",
                "subscription"]
            {
                #expect(event[field] != nil, "missing \(field) in \(event)")
            }
            #expect(event["origin"] as? String == "live")
            #expect((event["id"] as? String)?.hasPrefix("evt_") == true)
            #expect(event["type"] as? String == "directus.items.\(event["event"]!)")
        }
        #expect((events[1]["data"] as? [String: Any])?["status"] as? String == "published")
        #expect(events[6]["data"] is NSNull)
        #expect(Set(events.compactMap { $0["id"] as? String }).count == events.count)

        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        #expect(bridge.stderr.contains("stopped"))
        #expect(!bridge.stderr.contains("admin-static-token"))
    }
}
