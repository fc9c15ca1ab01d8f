import BridgeTestSupport
import Foundation
import Testing

/// Contract, "Commands": `resync` on a running bridge takes effect within 10 seconds, whatever its sink is doing. Here
/// the sink takes nothing (a webhook receiver that is down, an outbox of 100, a queue of one batch) and the reader
/// waits for it elsewhere than in a snapshot of the requested subscription (that case is
/// SnapshotBackpressureTests'): in a snapshot of another subscription of the same sink, or in the ordinary stream.
/// The request is taken with the sink still down — `status --json` shows the new snapshot's watermark and no request
/// left — and once the sink is back it holds every line of the new snapshot and every change, none dropped.
@Suite(.serialized) struct ResyncBesideAStuckSinkTests {
    /// Activity mode, `subscriptions`, one webhook sink with an outbox of 100 and a queue of one batch, status and
    /// metrics on a port of its own.
    private func config(_ emulator: Emulator, _ receiver: WebhookReceiver, subscriptions: String) -> String {
        webhookConfig(
            url: emulator.url,
            sinks: webhookSink(
                receiver.hookURL("/hook"),
                "max_outbox: 100\nretry_schedule: [100ms]\nmax_attempts: 1000"
            ),
            maxQueue: 1,
            operations: true,
            mode: "activity"
        ).replacingOccurrences(of: "  - collection: articles\n", with: subscriptions)
    }

    /// `count` articles more, made in requests of 500.
    private func seed(_ emulator: Emulator, count: Int) throws {
        for start in stride(from: 0, to: count, by: 500) {
            try emulator.rest(
                "POST",
                "/items/articles",
                (start..<min(start + 500, count)).map { ["title": "item \($0)"] }
            )
        }
    }

    /// The keys of every item of `collection`.
    private func keys(_ emulator: Emulator, _ collection: String) throws -> Set<String> {
        let answer = try emulator.rest("GET", "/items/\(collection)?fields=id&limit=-1") as? [String: Any]
        return Set((answer?["data"] as? [[String: Any]] ?? []).compactMap { ($0["id"]).map { "\($0)" } })
    }

    /// What the receiver holds: (id, event, collection, key) of every delivery.
    private func delivered(_ receiver: WebhookReceiver) -> [(
        id: String, event: String, collection: String, key: String
    )] {
        ((try? receiver.delivered()) ?? []).map {
            (
                $0.id, $0.json["event"] as? String ?? "", $0.json["collection"] as? String ?? "",
                $0.json["key"] as? String ?? ""
            )
        }
    }

    /// `status --json`'s snapshot object of subscription `uid` (its only sink), read beside the running `bridge`.
    private func snapshotStatus(_ bridge: BridgeProcess, yaml: String, uid: String) throws -> [String: Any] {
        let address = try #require(bridge.operationsAddress)
        try yaml.replacingOccurrences(of: "listen: \"127.0.0.1:0\"", with: "listen: \"\(address)\"").write(
            to: bridge.directory.appendingPathComponent("status.yaml"),
            atomically: true,
            encoding: .utf8
        )
        let status = try BridgeProcess(
            arguments: ["status", "--json", "--config", "status.yaml"],
            directory: bridge.directory
        )
        #expect(status.waitForExit() == 0, "\(status.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(status.lines.joined(separator: "\n").utf8))
        let subscriptions = (report as? [String: Any])?["subscriptions"] as? [[String: Any]] ?? []
        let sinks = subscriptions.first { $0["uid"] as? String == uid }?["sinks"] as? [[String: Any]] ?? []
        return try #require(sinks.first?["snapshot"] as? [String: Any], "\(status.lines)")
    }

    /// Runs `directus-bridge resync <uid>` beside `bridge`.
    private func resync(_ uid: String, beside bridge: BridgeProcess) throws {
        let resync = try BridgeProcess(
            arguments: ["resync", uid, "--config", "bridge.yaml"],
            directory: bridge.directory
        )
        #expect(resync.waitForExit() == 0, "\(resync.stderr)")
    }

    /// Whether the bridge logged that it took a request of `uid`.
    private func taken(_ bridge: BridgeProcess, _ uid: String) -> Bool {
        bridge.stderr.split(separator: "\n").contains {
            $0.contains("resync requested: the subscription is snapshotted again") && $0.contains("=\(uid)")
        }
    }

    /// The `articles` snapshot waits for the sink (a page at the full queue); a `resync comments` is taken at once and
    /// its snapshot follows the articles' one. Before, the request waited until the articles' snapshot was durable.
    @Test func aResyncOfAnotherSubscriptionIsTakenWhileASnapshotWaitsForTheSink() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try seed(emulator, count: 1500)
        for n in 0..<30 { _ = try emulator.create("comments", ["text": "comment \(n)", "article": 1]) }
        let articles = try keys(emulator, "articles")
        let comments = try keys(emulator, "comments")
        try receiver.down()
        let yaml = config(
            emulator,
            receiver,
            subscriptions: "  - collection: articles\n    snapshot: true\n  - collection: comments\n"
        )
        let bridge = try BridgeProcess.run(config: yaml)
        #expect(bridge.waitForLog("sink full, waiting at its cursor", timeout: 30), "\(bridge.stderr.suffix(3000))")
        #expect(bridge.waitForLog("snapshot started", timeout: 10))
        try resync("comments", beside: bridge)
        let asked = Date()
        // The watcher reads every 2 s: 10 s is the contract, the rest the patience of a loaded machine.
        #expect(bridge.waitUntil(timeout: 20) { taken($0, "comments") }, "\(bridge.stderr.suffix(3000))")
        print(
            "resync of another subscription beside a waiting snapshot: taken \(Date().timeIntervalSince(asked)) s after the command"
        )
        let watermark = try emulator.newestActivityID()
        let state = try snapshotStatus(bridge, yaml: yaml, uid: "comments")
        #expect(state["state"] as? String == "pending", "\(state)")
        #expect(state["watermark"] as? Int == watermark, "\(state)")
        #expect(state["resync_requested"] as? Bool == false, "\(state)")
        #expect(!bridge.stderr.contains("snapshot done"), "\(bridge.stderr.suffix(3000))")

        try receiver.up()
        let snapshotKeys = { (collection: String) -> Set<String> in
            Set(delivered(receiver).filter { $0.event == "snapshot" && $0.collection == collection }.map(\.key))
        }
        let shown = { () -> String in
            let done = (snapshotKeys("articles").count, snapshotKeys("comments").count)
            return "\(done.0)/\(articles.count) articles, \(done.1)/\(comments.count) comments"
        }
        #expect(
            bridge.waitUntil(timeout: 120) { _ in
                snapshotKeys("articles") == articles && snapshotKeys("comments") == comments
            },
            "\(shown()): \(bridge.stderr.suffix(3000))"
        )
        let ofComments = delivered(receiver).filter { $0.event == "snapshot" && $0.collection == "comments" }
        #expect(ofComments.allSatisfy { $0.id.hasSuffix("_\(watermark)") }, "\(ofComments.prefix(3))")
        #expect(
            bridge.waitUntil(timeout: 20) { $0.stderr.components(separatedBy: "snapshot done").count - 1 >= 2 },
            "\(bridge.stderr.suffix(3000))"
        )
        #expect(!bridge.stderr.contains("dropping"), "\(bridge.stderr.suffix(3000))")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    /// The stream of changes waits for the sink (a page of 500 changes at the full queue); a `resync articles` is
    /// taken at once, and once the sink is back every change arrives, then every item of the new snapshot. Before,
    /// the request waited until the page was queued.
    @Test func aResyncIsTakenWhileTheStreamWaitsForTheSink() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.down()
        let yaml = config(emulator, receiver, subscriptions: "  - collection: articles\n")
        let bridge = try BridgeProcess.run(config: yaml)
        #expect(bridge.waitForLog("reading the activity log", timeout: 30), "\(bridge.stderr.suffix(3000))")
        let before = try emulator.newestActivityID()
        try seed(emulator, count: 2500)
        let changes = try emulator.activityIDs(["articles"], after: before).map { "act_\($0)" }
        #expect(bridge.waitForLog("sink full, waiting at its cursor", timeout: 30), "\(bridge.stderr.suffix(3000))")
        // The sink holds the first page, the queue the second: the reader waits to queue the third (or reads it,
        // and then waits: five pages cannot pass a sink that takes nothing).
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        let queued = {
            ((try? ParsedMetrics(parsing: HTTPFetch.get(base + "/metrics").text))?.value("directus_bridge_queue_depth"))
                ?? 0
        }
        #expect(bridge.waitUntil(timeout: 30) { _ in queued() > 0 }, "\(bridge.stderr.suffix(3000))")
        try resync("articles", beside: bridge)
        let asked = Date()
        #expect(bridge.waitUntil(timeout: 20) { taken($0, "articles") }, "\(bridge.stderr.suffix(3000))")
        print("resync beside a waiting stream: taken \(Date().timeIntervalSince(asked)) s after the command")
        let watermark = try emulator.newestActivityID()
        let state = try snapshotStatus(bridge, yaml: yaml, uid: "articles")
        #expect(state["state"] as? String == "pending", "\(state)")
        #expect(state["watermark"] as? Int == watermark, "\(state)")
        #expect(state["resync_requested"] as? Bool == false, "\(state)")
        let articles = try keys(emulator, "articles")

        try receiver.up()
        let resynced = { () -> Set<String> in
            Set(delivered(receiver).filter { $0.event == "snapshot" && $0.id.hasSuffix("_\(watermark)") }.map(\.key))
        }
        #expect(
            bridge.waitUntil(timeout: 120) { _ in resynced() == articles },
            "\(resynced().count) of \(articles.count) items: \(bridge.stderr.suffix(3000))"
        )
        // Every change arrives: those queued before the request, and those up to the watermark the reader had not
        // read yet (before, these were left to the snapshot, which holds no delete).
        let order = delivered(receiver)
        let streamed = Set(order.filter { $0.event == "create" }.map(\.id))
        #expect(streamed == Set(changes), "\(streamed.count) of \(changes.count) changes")
        // Per item, its change comes before its line of the new snapshot.
        let arrival = Dictionary(order.enumerated().map { ("\($0.element.event) \($0.element.key)", $0.offset) }) {
            first,
            _ in first
        }
        let late = order.filter { streamed.contains($0.id) }.filter { change in
            (arrival["snapshot \(change.key)"] ?? -1) < (arrival["create \(change.key)"] ?? 0)
        }
        #expect(late.isEmpty, "\(late.count) changes after their item's snapshot line: \(late.prefix(3).map(\.key))")
        #expect(bridge.waitForLog("snapshot done", timeout: 20), "\(bridge.stderr.suffix(3000))")
        #expect(!bridge.stderr.contains("dropping"), "\(bridge.stderr.suffix(3000))")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
