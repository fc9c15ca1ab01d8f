import BridgeTestSupport
import Foundation
import Testing

/// A snapshot cut by a clean stop (SIGTERM, exit 0) resumes after the last page its sink made durable, at the same
/// watermark: every item's snapshot line arrives once across the two runs (contract, "The delivery guarantee, per
/// mode": a repeat only across a crash or a failover; docs/RELIABILITY.md, "Careless or hostile operators"). Before:
/// the restart took the snapshot again from its first page, so every line of the first run came twice (same ids).
/// Real binary, emulator whose snapshot pages are slow (a large table on a busy database), so that the stop comes
/// mid-snapshot.
@Suite(.serialized) struct SnapshotResumeEndToEndTests {
    /// `count` more articles (beside the sample data), in requests of 500; returns every key there is now.
    private func seed(_ emulator: Emulator, count: Int) throws -> Set<String> {
        for start in stride(from: 0, to: count, by: 500) {
            try emulator.rest(
                "POST", "/items/articles", (start..<min(start + 500, count)).map { ["title": "item \($0)"] })
        }
        return Set(try emulator.keys(of: "articles"))
    }

    private func slowPages(_ emulator: Emulator, milliseconds: Int) throws {
        try emulator.control("settings", ["sorted_page_delay_ms": milliseconds])
    }

    /// The ids of the lines of `event` `snapshot`, with repeats.
    private static func snapshotIDs(_ lines: [[String: Any]]) -> [String] {
        lines.filter { $0["event"] as? String == "snapshot" }.compactMap { $0["id"] as? String }
    }

    private static func repeated(_ ids: [String]) -> [String] {
        var seen = Set<String>()
        return ids.filter { !seen.insert($0).inserted }
    }

    @Test func anNDJSONSnapshotStoppedMidwayResumesWithoutARepeat() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let keys = try seed(emulator, count: 4000)
        try slowPages(emulator, milliseconds: 400)
        let yaml = activityConfig(
            url: emulator.url, pollInterval: "200ms", subscriptions: "  - collection: articles\n    snapshot: true")
        let first = try BridgeProcess.run(config: yaml)
        #expect(
            first.waitUntil(timeout: 60) { Self.snapshotIDs($0.events).count >= 1000 }, "\(first.stderr.suffix(3000))")
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0, "\(first.stderr.suffix(3000))")
        let before = Self.snapshotIDs(first.events)
        try #require(before.count < keys.count, "the stop came after the snapshot's end: \(before.count)")

        // Stopped: `status` says where the snapshot stands and where the next start resumes.
        let status = try BridgeProcess(arguments: ["status", "--config", "bridge.yaml"], directory: first.directory)
        #expect(status.waitForExit() == 0, "\(status.stderr)")
        let line = status.lines.first { $0.hasPrefix("subscription  articles") } ?? "\(status.lines)"
        #expect(
            line.contains("snapshot pending (watermark ") && line.contains("runs at the next start, resuming after key ")
                && line.contains("(\(before.count) lines in the sink)"),
            "\(line)")

        try slowPages(emulator, milliseconds: 0)
        let second = try BridgeProcess.run(config: yaml, in: first.directory)
        #expect(second.waitForLog("snapshot done", timeout: 60), "\(second.stderr.suffix(3000))")
        #expect(second.stderr.contains("snapshot resumed after the last page its sink holds"), "\(second.stderr)")
        second.send(SIGTERM)
        #expect(second.waitForExit() == 0)
        let all = before + Self.snapshotIDs(second.events)
        #expect(Self.repeated(all).isEmpty, "\(Self.repeated(all).count) repeated: \(Self.repeated(all).prefix(5))")
        let delivered = Set(
            (first.events + second.events).filter { $0["event"] as? String == "snapshot" }.compactMap {
                $0["key"] as? String
            })
        #expect(delivered == keys, "\(keys.subtracting(delivered).count) missing")
    }

    /// The webhook sink: a page is durable once it is in the outbox (fsynced), whatever the receiver has had yet; the
    /// rows a stop leaves in the outbox go out at the next start, and the snapshot resumes after them.
    @Test func aWebhookSnapshotStoppedMidwayResumesWithoutARepeat() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        let keys = try seed(emulator, count: 4000)
        try slowPages(emulator, milliseconds: 400)
        try receiver.script(steps: [], randomDelayMs: [1, 3])
        let yaml = webhookConfig(
            url: emulator.url, sinks: webhookSink(receiver.hookURL("/hook")), mode: "activity"
        ).replacingOccurrences(of: "  - collection: articles\n", with: "  - collection: articles\n    snapshot: true\n")
        let delivered = { () -> [[String: Any]] in ((try? receiver.delivered()) ?? []).map(\.json) }
        let first = try BridgeProcess.run(config: yaml)
        #expect(
            first.waitUntil(timeout: 60) { _ in Self.snapshotIDs(delivered()).count >= 1000 },
            "\(first.stderr.suffix(3000))")
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0, "\(first.stderr.suffix(3000))")
        try #require(Self.snapshotIDs(delivered()).count < keys.count, "the stop came after the snapshot's end")

        try slowPages(emulator, milliseconds: 0)
        let second = try BridgeProcess.run(config: yaml, in: first.directory)
        #expect(second.waitForLog("snapshot done", timeout: 60), "\(second.stderr.suffix(3000))")
        #expect(second.stderr.contains("snapshot resumed after the last page its sink holds"), "\(second.stderr)")
        #expect(
            second.waitUntil(timeout: 60) { _ in Set(Self.snapshotIDs(delivered())).count >= keys.count },
            "\(Set(Self.snapshotIDs(delivered())).count) of \(keys.count): \(second.stderr.suffix(3000))")
        second.send(SIGTERM)
        #expect(second.waitForExit() == 0)
        let all = Self.snapshotIDs(delivered())
        #expect(Self.repeated(all).isEmpty, "\(Self.repeated(all).count) repeated: \(Self.repeated(all).prefix(5))")
        let snapshotKeys = Set(
            delivered().filter { $0["event"] as? String == "snapshot" }.compactMap { $0["key"] as? String })
        #expect(snapshotKeys == keys, "\(keys.subtracting(snapshotKeys).count) missing")
    }
}
