import BridgeTestSupport
import Foundation
import Testing

/// Manual sorting (docs/directus-protocol.md §14.3): `POST /utils/sort` moves several items but Directus records no
/// activity and sends one `update`, for the dragged item. The bridge gives every moved item one update line with its
/// new sort value, read back, in both modes.
@Suite(.serialized) struct ManualSortTests {
    static let chapters = "  - collection: chapters\n    query:\n      fields: [id, title, sort]"

    /// The update lines so far, as "key:sort".
    static func moves(_ bridge: BridgeProcess) -> [String] {
        bridge.events.filter { $0["event"] as? String == "update" }.map { event in
            "\(event["key"]!):\((event["data"] as? [String: Any])?["sort"] ?? "?")"
        }
    }

    /// The sort watcher's finished checks so far: how many items each found moved and not covered otherwise.
    static func checks(_ bridge: BridgeProcess) -> [String] {
        bridge.stderr.split(separator: "\n").filter { $0.contains("checked manual sort order") }.map { line in
            String(line.split(separator: " ").first { $0.hasPrefix("moved=") } ?? "")
        }
    }

    /// Waits for the next finished check after `count` and returns what it found.
    static func nextCheck(_ bridge: BridgeProcess, after count: Int) -> String? {
        bridge.waitUntil { checks($0).count > count } ? checks(bridge)[count] : nil
    }

    static func start(_ config: String, emulator: Emulator) throws -> BridgeProcess {
        let bridge = try BridgeProcess.run(config: config)
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")
        // The check every (re)connect starts: from here on each sort or sort-field update causes exactly one.
        #expect(nextCheck(bridge, after: 0) == "moved=0", "\(bridge.stderr)")
        return bridge
    }

    @Test func liveModeGivesEveryMovedItemOneUpdateLine() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try Self.start(liveConfig(url: emulator.url, subscriptions: Self.chapters), emulator: emulator)

        // Chapter 1 to chapter 4's place: 1 → 4, and 2, 3, 4 move up one. The socket delivers 1; the bridge the rest.
        try emulator.rest("POST", "/utils/sort/chapters", ["item": 1, "to": 4])
        #expect(Self.nextCheck(bridge, after: 1) == "moved=3")
        #expect(bridge.waitUntil { Self.moves($0).count >= 4 }, "got \(bridge.lines): \(bridge.stderr)")
        #expect(Self.moves(bridge).sorted() == ["1:4", "2:1", "3:2", "4:3"], "\(bridge.lines)")

        // An ordinary update of the sort field is one change: the socket's line, nothing from the watcher.
        try emulator.rest("PATCH", "/items/chapters/5", ["sort": 50])
        #expect(Self.nextCheck(bridge, after: 2) == "moved=0")
        #expect(bridge.waitUntil { Self.moves($0).count == 5 })
        #expect(Self.moves(bridge).last == "5:50")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func activityModeGivesEveryMovedItemOneUpdateLineAlthoughTheLogHasNone() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try Self.start(
            activityConfig(url: emulator.url, pollInterval: "1s", subscriptions: Self.chapters), emulator: emulator)

        // Chapter 5 to chapter 2's place: 5 → 2, and 2, 3, 4 move down one. Nothing in the activity log.
        try emulator.rest("POST", "/utils/sort/chapters", ["item": 5, "to": 2])
        #expect(try emulator.newestActivityID() == 0, "Directus records nothing for a sort")
        #expect(Self.nextCheck(bridge, after: 1) == "moved=4")
        #expect(bridge.waitUntil { Self.moves($0).count >= 4 }, "got \(bridge.lines): \(bridge.stderr)")
        #expect(Self.moves(bridge).sorted() == ["2:3", "3:4", "4:5", "5:2"], "\(bridge.lines)")
        for event in bridge.events {
            #expect((event["id"] as? String)?.hasPrefix("evt_") == true && event["seq"] is NSNull)
        }

        // A tracked update of the sort field comes from the activity log alone (its act_ line), not twice.
        try emulator.rest("PATCH", "/items/chapters/1", ["sort": 10])
        #expect(Self.nextCheck(bridge, after: 2) == "moved=0")
        #expect(bridge.waitUntil { Self.moves($0).count == 5 }, "\(bridge.lines)")
        #expect(Self.moves(bridge).last == "1:10")
        #expect((bridge.events.last?["id"] as? String)?.hasPrefix("act_") == true)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
