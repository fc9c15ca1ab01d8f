import BridgeTestSupport
import Foundation
import Testing

/// `state/cursor.db` deleted under a running bridge (`rm state/cursor.db*`), with the shipped binary: what does the
/// next start repeat or lose? Before: the progress after the deletion went into the deleted file, the next start
/// found no cursor and began from nothing — the snapshot taken again (every item repeated) and the change made
/// while the bridge was stopped never delivered (docs/RELIABILITY.md, "Careless or hostile operators").
@Suite(.serialized) struct CursorFileGoneEndToEndTests {
    @Test func cursorDBDeletedUnderARunningBridgeCostsNoRepeatAndNoLoss() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let before = try (0..<3).map { try emulator.create("articles", ["title": "before \($0)"]) }
        let yaml = liveConfig(
            url: emulator.url, subscriptions: "  - collection: articles\n    snapshot: true"
        ).replacingOccurrences(of: "mode: live", with: "mode: activity\n  poll_interval: 200ms")
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "cursor-gone")
        let keys = { (bridge: BridgeProcess) in bridge.events.compactMap { $0["key"] as? String } }

        let first = try BridgeProcess.run(config: yaml, in: directory)
        #expect(first.waitForLog("snapshot done", timeout: 60), "\(first.stderr.suffix(3000))")
        let state = directory.appendingPathComponent("state/cursor.db").path
        for suffix in ["", "-wal", "-shm"] { unlink(state + suffix) }
        let during = try (0..<3).map { try emulator.create("articles", ["title": "during \($0)"]) }
        #expect(
            first.waitUntil(timeout: 60) { Set(keys($0)).isSuperset(of: before + during) },
            "\(first.stderr.suffix(3000))")
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0)
        #expect(first.stderr.contains("cursor.db was deleted or moved"), "\(first.stderr.suffix(3000))")

        let stopped = try emulator.create("articles", ["title": "while stopped"])
        let second = try BridgeProcess.run(config: yaml, in: directory)
        let after = try emulator.create("articles", ["title": "after"])
        #expect(second.waitUntil(timeout: 60) { keys($0).contains(after) }, "\(second.stderr.suffix(3000))")
        second.send(SIGTERM)
        #expect(second.waitForExit() == 0)
        #expect(keys(second) == [stopped, after], "\(second.stderr.suffix(3000))")
    }
}
