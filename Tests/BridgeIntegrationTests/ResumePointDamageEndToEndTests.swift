import BridgeTestSupport
import Foundation
import Testing

/// A snapshot's resume point damaged in `cursor.db` while the bridge is stopped (docs/RELIABILITY.md, "Files another
/// user controls"): the next start runs the snapshot from its first page with a warning, and every item arrives.
/// Before: `snapshot_after` `null` resumed "after null", which no key is above: the second run said "snapshot done"
/// with none of the items the first run had not reached. Real binary, emulator with slow snapshot pages so that the
/// stop comes mid-snapshot; the file edited with Python's sqlite3, as an operator would with a tool.
@Suite(.serialized) struct ResumePointDamageEndToEndTests {
    private static func snapshotKeys(_ lines: [[String: Any]]) -> [String] {
        lines.filter { $0["event"] as? String == "snapshot" }.compactMap { $0["key"] as? String }
    }

    /// Runs `sql` on the SQLite file at `path` with the test tools' Python.
    private static func edit(_ path: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.python)
        process.arguments = [
            "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()", path, sql,
        ]
        try process.run()
        #expect(ChildExit.wait(process) == 0)
    }

    @Test func aResumePointMadeNullWhileStoppedStartsTheSnapshotOverAndLosesNoItem() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        for _ in 0..<3 { try emulator.createArticles(500, title: "item") }
        let keys = try emulator.keys(of: "articles")
        try emulator.control("settings", ["sorted_page_delay_ms": 400])
        let yaml = activityConfig(
            url: emulator.url, pollInterval: "200ms", subscriptions: "  - collection: articles\n    snapshot: true")
        let first = try BridgeProcess.run(config: yaml)
        #expect(first.waitUntil(timeout: 60) { Self.snapshotKeys($0.events).count >= 500 }, "\(first.stderr.suffix(3000))")
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0, "\(first.stderr.suffix(3000))")
        let before = Self.snapshotKeys(first.events)
        try #require(before.count < keys.count, "the stop came after the snapshot's end: \(before.count)")

        try Self.edit(first.directory.appendingPathComponent("state/cursor.db").path, "UPDATE sink_subscription_state SET snapshot_after = 'null'")
        try emulator.control("settings", ["sorted_page_delay_ms": 0])
        let second = try BridgeProcess.run(config: yaml, in: first.directory)
        #expect(second.waitForLog("snapshot done", timeout: 60), "\(second.stderr.suffix(3000))")
        #expect(second.stderr.contains("resume point in the saved state cannot be used"), "\(second.stderr.suffix(3000))")
        second.send(SIGTERM)
        #expect(second.waitForExit() == 0)
        let after = Self.snapshotKeys(second.events)
        #expect(Set(after) == keys, "\(keys.subtracting(after).count) missing from the second run")
        #expect(after.count == keys.count, "from the first page, each once")
    }
}
