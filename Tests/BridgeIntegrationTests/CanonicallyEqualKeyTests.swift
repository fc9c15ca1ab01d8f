import BridgeTestSupport
import Foundation
import Testing

/// Two items whose string keys Swift holds equal (Unicode canonical equivalence) and Directus does not: `é` as one code
/// point (U+00E9) and as `e` + U+0301. Changed in one batch, the release binary of main at 94ea0c4 looked both items
/// up as one and wrote the second's change with the first's `data` (operator3 in docs/RELIABILITY.md): a user who
/// may create items could have the bridge send another item's content under theirs.
@Suite struct CanonicallyEqualKeyTests {
    @Test func twoItemsWhoseKeysSwiftHoldsEqualEachGetTheirOwnData() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let precomposed = "\u{E9}"
        let decomposed = "e\u{301}"
        try emulator.rest("POST", "/items/tags", [["slug": precomposed, "label": "a"], ["slug": decomposed, "label": "b"]])
        let config = activityConfig(url: emulator.url, pollInterval: "300ms", subscriptions: "  - collection: tags")
        let bridge = try BridgeProcess.run(config: config)
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        // Both changed while the bridge is stopped: read back in one batch.
        try emulator.rest("PATCH", "/items/tags/%C3%A9", ["label": "precomposed"])
        try emulator.rest("PATCH", "/items/tags/e%CC%81", ["label": "decomposed"])
        let again = try BridgeProcess.run(config: config, in: bridge.directory)
        let sentinel = try emulator.create("tags", ["slug": "sentinel", "label": "s"])
        let events = try #require(again.events(beforeSentinel: sentinel, in: "tags", timeout: 20), "\(again.stderr)")
        // By code points: Swift's `==` would find either key for the other.
        let labels = events.map { event in
            (Array((event["key"] as? String ?? "").unicodeScalars), (event["data"] as? [String: Any])?["label"] as? String)
        }
        #expect(labels.count == 2, "\(events)")
        #expect(labels.first { $0.0 == Array(precomposed.unicodeScalars) }?.1 == "precomposed", "\(events)")
        #expect(labels.first { $0.0 == Array(decomposed.unicodeScalars) }?.1 == "decomposed", "\(events)")
        again.send(SIGTERM)
        #expect(again.waitForExit() == 0)
    }
}
