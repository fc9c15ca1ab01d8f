import BridgeTestSupport
import Foundation
import Testing

/// Runs `directus-bridge <arguments>` in `directory` and returns (exit status, stdout lines, stderr).
private func command(_ arguments: [String], in directory: URL, config: String = "bridge.yaml") throws
    -> (Int32?, [String], String)
{
    let process = try BridgeProcess(arguments: arguments + ["--config", config], directory: directory)
    let status = process.waitForExit()
    return (status, process.lines, process.stderr)
}

extension Emulator {
    /// The primary keys of every item of `collection`.
    func keys(of collection: String) throws -> Set<String> {
        let answer = try rest("GET", "/items/\(collection)?fields=id&limit=-1") as? [String: Any]
        return Set((answer?["data"] as? [[String: Any]] ?? []).compactMap { ($0["id"] as? Int).map(String.init) })
    }
}

/// Day-two commands and progress end to end: `resync`, `status`, and the progress of a snapshot in logs and metrics.
@Suite(.serialized) struct ResyncStatusProgressTests {
    @Test func resyncSnapshotsTheSubscriptionAgainFromAFreshWatermarkAtTheNextRunOnly() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        try emulator.rest("POST", "/items/articles", (0..<5).map { ["title": "item \($0)", "status": "draft"] })
        let subscriptions = "  - collection: articles\n  - collection: comments"
        let config = activityConfig(url: emulator.url, pollInterval: "300ms", subscriptions: subscriptions)
        let first = try BridgeProcess.run(config: config)
        #expect(first.waitForLog("reading the activity log"), "\(first.stderr)")
        let before = try emulator.create("articles", ["title": "streamed", "status": "draft"])
        #expect(first.waitUntil { $0.events.count >= 1 }, "\(first.stderr)")
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0)
        #expect(first.events.allSatisfy { $0["event"] as? String != "snapshot" }, "snapshot: false never snapshots")
        let directory = first.directory

        // An unknown uid is a usage error that names the ones there are.
        let (unknownStatus, _, unknownError) = try command(["resync", "artcles"], in: directory)
        #expect(unknownStatus == 64, "\(unknownError)")
        #expect(unknownError.contains("did you mean \"articles\"?"), "\(unknownError)")
        let (status, _, recorded) = try command(["resync", "articles"], in: directory)
        #expect(status == 0, "\(recorded)")
        let (_, report, _) = try command(["status"], in: directory)
        #expect(report.contains { $0.contains("articles (articles): ") && $0.contains("resync requested") }, "\(report)")
        #expect(report.contains { $0.hasPrefix("subscription  comments") && !$0.contains("resync") }, "\(report)")

        // Changed while the bridge was down: the snapshot gives its state now.
        try emulator.rest("PATCH", "/items/articles/\(before)", ["status": "published"])
        let watermark = try emulator.newestActivityID()
        let second = try BridgeProcess.run(config: config, in: directory)
        #expect(second.waitForLog("snapshot done", timeout: 20), "\(second.stderr)")
        let after = try emulator.create("articles", ["title": "after the watermark", "status": "draft"])
        #expect(second.waitUntil { $0.events.contains { $0["key"] as? String == after } }, "\(second.stderr)")
        second.send(SIGTERM)
        #expect(second.waitForExit() == 0)
        let snapshot = second.events.filter { $0["event"] as? String == "snapshot" }
        let existing = try emulator.keys(of: "articles").subtracting([after])
        #expect(snapshot.compactMap { $0["key"] as? String }.sorted() == existing.sorted(), "every item once")
        #expect(snapshot.allSatisfy { ($0["id"] as? String)?.hasSuffix("_\(watermark)") == true }, "fresh watermark")
        let patched = snapshot.first { $0["key"] as? String == before }?["data"] as? [String: Any]
        #expect(patched?["status"] as? String == "published")
        // The update made while the bridge was stopped (after the sink's cursor, before the watermark) is streamed
        // too, before the snapshot's first line (ResyncGapTests); then the change after the watermark.
        let streamed = second.events.filter { $0["event"] as? String != "snapshot" }
        #expect(
            streamed.map { "\($0["event"] as? String ?? "") \($0["key"] as? String ?? "")" }
                == ["update \(before)", "create \(after)"],
            "\(streamed)"
        )
        #expect(second.events.first?["event"] as? String == "update", "\(second.events.prefix(2))")

        // The request was acted on once: the next run streams on without a snapshot.
        let third = try BridgeProcess.run(config: config, in: directory)
        #expect(third.waitForLog("reading the activity log"), "\(third.stderr)")
        let last = try emulator.create("articles", ["title": "third run", "status": "draft"])
        #expect(third.waitUntil { $0.events.contains { $0["key"] as? String == last } }, "\(third.stderr)")
        third.send(SIGTERM)
        #expect(third.waitForExit() == 0)
        #expect(third.events.allSatisfy { $0["event"] as? String != "snapshot" }, "\(third.events)")

        // Live mode keeps no cursor: resync refuses it.
        let live = try TestEnvironment.makeTemporaryDirectory(prefix: "resync-live")
        try activityConfig(url: emulator.url, mode: "live").write(
            to: live.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let (liveStatus, _, liveError) = try command(["resync", "articles"], in: live)
        #expect(liveStatus == 78, "\(liveError)")
    }

    @Test func aSnapshotLogsItsProgressAndPublishesItInMetrics() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        try emulator.rest("POST", "/items/articles", (0..<2100).map { ["title": "item \($0)", "status": "draft"] })
        let total = try emulator.keys(of: "articles").count
        let bridge = try BridgeProcess.run(
            config: activityConfig(
                url: emulator.url,
                subscriptions: "  - collection: articles\n    snapshot: true",
                extra: "http:\n  listen: \"127.0.0.1:0\""
            ).replacingOccurrences(of: "log:\n  level: debug", with: "log:\n  level: info\n  progress_interval: 1ms")
        )
        #expect(bridge.waitForLog("snapshot done", timeout: 30), "\(bridge.stderr)")
        let progress = bridge.stderr.split(separator: "\n").filter { $0.contains("snapshot progress") }
        // Pages of 500: a line after each page but the last, which is followed by "snapshot done".
        #expect(progress.count >= total / 500, "\(progress)")
        #expect(progress.allSatisfy { $0.contains("total=\(total)") && $0.contains("rate_per_second=") }, "\(progress)")
        #expect(progress.first?.contains("count=500") == true, "\(progress)")
        #expect(progress.first?.contains("remaining=\(total - 500)") == true, "\(progress)")
        #expect(progress.dropFirst().allSatisfy { $0.contains("eta_seconds=") }, "\(progress)")

        let url = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        let metrics = try ParsedMetrics(parsing: HTTPFetch.get(url + "/metrics").text)
        let labels = ["subscription": "articles"]
        #expect(metrics.value("directus_bridge_snapshot_done_items", labels) == Double(total))
        #expect(metrics.value("directus_bridge_snapshot_expected_items", labels) == Double(total))
        #expect(metrics.value("directus_bridge_snapshot_running", labels) == 0)
        #expect(metrics.value("directus_bridge_snapshot_eta_seconds", labels) == 0)
        #expect((metrics.value("directus_bridge_snapshot_rate_items_per_second", labels) ?? 0) > 0)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func statusShowsCursorsDeadLettersSnapshotsAndTheRunningService() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(steps: [["status": 410]])
        try emulator.rest("POST", "/items/articles", (0..<3).map { ["title": "item \($0)", "status": "draft"] })
        let sinks = webhookSink(receiver.hookURL("/hook"), "events: [create]")
        let yaml = { (listen: String) in
            webhookConfig(url: emulator.url, sinks: sinks, mode: "activity")
                .replacingOccurrences(of: "  - collection: articles\n", with: "  - collection: articles\n    snapshot: true\n")
                .replacingOccurrences(of: "listen: \"\"", with: "listen: \"\(listen)\"")
        }
        let bridge = try BridgeProcess.run(config: yaml("127.0.0.1:0"))
        #expect(bridge.waitForLog("snapshot done", timeout: 20), "\(bridge.stderr)")
        _ = try emulator.create("articles", ["title": "dead-lettered", "status": "draft"])
        #expect(bridge.waitUntil(timeout: 20) { _ in ((try? receiver.requests().count) ?? 0) >= 1 }, "\(bridge.stderr)")
        let address = try #require(bridge.operationsAddress)
        try yaml(address).write(
            to: bridge.directory.appendingPathComponent("status.yaml"), atomically: true, encoding: .utf8)
        let cursorWanted = try emulator.newestActivityID()
        #expect(
            bridge.waitUntil(timeout: 20) { bridge in
                let report = (try? command(["status"], in: bridge.directory, config: "status.yaml").1) ?? []
                return report.contains { $0.contains("dead letters 1") }
                    && report.contains { $0.contains("cursor \(cursorWanted)") }
            }, "\(bridge.stderr)")
        let (code, running, errors) = try command(["status"], in: bridge.directory, config: "status.yaml")
        #expect(code == 0, "\(errors)")
        #expect(running.first?.hasPrefix("service       running at http://\(address), ready; role active") == true, "\(running)")
        #expect(running.contains("mode          activity (in force)"), "\(running)")
        let activity = "activity      lowest sink cursor \(cursorWanted), head \(cursorWanted), lag 0"
        #expect(running.contains { $0.hasPrefix(activity) }, "\(running)")
        #expect(running.contains { $0.hasPrefix("subscription  articles (articles): ") && $0.contains("snapshot done") }, "\(running)")
        #expect(
            running.contains {
                $0.hasPrefix("sink          0-127.0.0.1:\(receiver.hookPort)-") && $0.contains("cursor \(cursorWanted)")
                    && $0.contains("outbox 0, dead letters 1")
            }, "\(running)")

        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        let (_, stopped, _) = try command(["status"], in: bridge.directory, config: "status.yaml")
        #expect(stopped.first?.hasPrefix("service       not running (no answer at http://\(address)") == true, "\(stopped)")
        #expect(stopped.contains { $0.contains("dead letters 1") && $0.contains("cursor \(cursorWanted)") }, "\(stopped)")
        let (_, offline, _) = try command(["status"], in: bridge.directory)
        let portZero = "service       unknown (http.listen has port 0, chosen anew at every start); stored state only"
        #expect(offline.first == portZero, "\(offline)")
    }
}
