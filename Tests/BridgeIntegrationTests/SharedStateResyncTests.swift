import BridgeTestSupport
import Foundation
import Testing

/// Contract, "Commands": `resync` on a running bridge with shared state takes effect within 10 seconds, whatever the
/// sink is doing. The active bridge's snapshot waits for a webhook receiver that is down; `shutdown_timeout` is two
/// minutes (a setting an operator may choose: the graceful stop waits that long for sinks that take nothing). The
/// request is taken with the sink still down, without a new term and without waiting for the stop — before, the
/// request ended the term, whose graceful stop waited `shutdown_timeout` for the stuck sink first. Items deleted
/// between the superseded snapshot and the new watermark get their deletes (ResyncGapTests, with shared state).
@Suite(.serialized, .timeLimit(.minutes(10))) struct SharedStateResyncTests: SharedStateRig {
    @Test func aResyncIsTakenWhileTheActiveBridgesSnapshotWaitsForTheSink() throws {
        let server = try startedSingleServer("shared-resync-stuck")
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        for start in stride(from: 0, to: 1500, by: 500) {
            try emulator.rest("POST", "/items/articles", (start..<start + 500).map { ["title": "item \($0)"] })
        }
        let answer = try emulator.rest("GET", "/items/articles?fields=id&limit=-1") as? [String: Any]
        let articles = Set((answer?["data"] as? [[String: Any]] ?? []).compactMap { $0["id"].map { "\($0)" } })
        try receiver.down()
        // An outbox of 100: the sink takes no more while the receiver is down.
        let yaml = try sharedWebhookConfig(emulator, [server], receiver, maxAttempts: 1000)
            .replacingOccurrences(of: "    max_attempts: 1000", with: "    max_attempts: 1000\n    max_outbox: 100")
            .replacingOccurrences(
                of: "  - collection: articles\n",
                with: "  - collection: articles\n    snapshot: true\n"
            )
            .replacingOccurrences(of: "  state_dir: ./state\n", with: "  state_dir: ./state\n  max_queue: 1\n")
            .replacingOccurrences(of: "shutdown_timeout: 5s", with: "shutdown_timeout: 120s")
        try #require(
            yaml.contains("max_queue: 1\n") && yaml.contains("max_outbox: 100") && yaml.contains("snapshot: true")
                && yaml.contains("120s")
        )
        let bridge = try BridgeProcess.run(config: yaml)
        try #require(bridge.waitForLog("became active", timeout: 30), "\(bridge.stderr.suffix(3000))")
        #expect(bridge.waitForLog("snapshot started", timeout: 30), "\(bridge.stderr.suffix(3000))")
        // The sink holds the first page and the queue the second: the snapshot waits for the sink.
        #expect(
            bridge.waitUntil(timeout: 30) { self.metric($0, "directus_bridge_queue_depth").map { $0 > 0 } == true },
            "\(bridge.stderr.suffix(3000))"
        )

        // Five items of the first page (queued, or in the sink) go before the resync: below its watermark, so in no
        // snapshot of it; their deletes must still come (before, the stream restarted after the watermark).
        let deleted = Set(articles.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }.prefix(5))
        for key in deleted { try emulator.rest("DELETE", "/items/articles/\(key)") }

        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "shared-resync-command")
        try yaml.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let resync = try BridgeProcess(
            arguments: ["resync", "articles", "--config", "bridge.yaml"],
            directory: directory
        )
        #expect(resync.waitForExit(timeout: 30) == 0, "\(resync.stderr)")
        let asked = Date()
        // The watcher reads every 2 s: 10 s is the contract, the rest the patience of a loaded machine.
        #expect(
            bridge.waitForLog("resync requested: the subscription is snapshotted again from the newest", timeout: 20),
            "\(bridge.stderr.suffix(3000))"
        )
        print(
            "shared state resync beside a waiting snapshot: taken \(Date().timeIntervalSince(asked)) s after the command"
        )
        #expect(bridge.waitForLog("snapshot superseded by a resync", timeout: 5), "\(bridge.stderr.suffix(3000))")
        let watermark = try emulator.newestActivityID()
        // The same term goes on: its reader started once.
        let starts = bridge.stderr.components(separatedBy: "reading the activity log").count - 1
        #expect(starts == 1, "\(starts) readers' starts: \(bridge.stderr.suffix(3000))")

        try receiver.up()
        let resynced = { () -> Set<String> in
            Set(
                ((try? receiver.delivered()) ?? []).filter {
                    $0.json["event"] as? String == "snapshot" && $0.id.hasSuffix("_\(watermark)")
                }.compactMap { $0.json["key"] as? String }
            )
        }
        let remaining = articles.subtracting(deleted)
        #expect(
            bridge.waitUntil(timeout: 120) { _ in resynced() == remaining },
            "\(resynced().count) of \(remaining.count): \(bridge.stderr.suffix(3000))"
        )
        let deletes = {
            Set(
                ((try? receiver.delivered()) ?? []).filter { $0.json["event"] as? String == "delete" }
                    .compactMap { $0.json["key"] as? String }
            )
        }
        #expect(bridge.waitUntil(timeout: 20) { _ in deletes() == deleted }, "\(deletes()) of \(deleted.sorted())")
        #expect(bridge.waitForLog("snapshot done", timeout: 20), "\(bridge.stderr.suffix(3000))")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }
}
