import BridgeTestSupport
import Foundation
import Testing

/// Contract, "The delivery guarantee, per mode": a snapshot or a resync into a sink that is full, down or slow waits
/// at that sink's cursor; nothing of it is dropped, and "snapshot done" is said only once every item is durable in
/// the sink (real binary, emulator, webhook receiver).
@Suite(.serialized) struct SnapshotBackpressureTests {
    /// `count` more articles in the emulator (beside its sample data), made in requests of 500; returns how many
    /// there are now.
    private func seed(_ emulator: Emulator, count: Int) throws -> Int {
        for start in stride(from: 0, to: count, by: 500) {
            try emulator.rest(
                "POST",
                "/items/articles",
                (start..<min(start + 500, count)).map { ["title": "item \($0)"] }
            )
        }
        return try emulator.keys(of: "articles").count
    }

    /// Activity mode, a snapshot of `articles`, one webhook sink with a small outbox.
    private func config(_ emulator: Emulator, _ receiver: WebhookReceiver, maxOutbox: Int = 100) -> String {
        webhookConfig(
            url: emulator.url,
            sinks: webhookSink(
                receiver.hookURL("/hook"),
                "max_outbox: \(maxOutbox)\nretry_schedule: [100ms]\nmax_attempts: 1000"
            ),
            operations: true,
            mode: "activity"
        ).replacingOccurrences(of: "  - collection: articles\n", with: "  - collection: articles\n    snapshot: true\n")
    }

    private func snapshotIDs(_ receiver: WebhookReceiver) -> Set<String> {
        Set(((try? receiver.delivered()) ?? []).filter { $0.json["event"] as? String == "snapshot" }.map(\.id))
    }

    @Test func aSnapshotIntoAWebhookThatIsDownWaitsAndDeliversEveryItemOnceItIsBack() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        let total = try seed(emulator, count: 3000)
        try receiver.down()
        let bridge = try BridgeProcess.run(config: config(emulator, receiver))
        let stateDir = bridge.directory.appendingPathComponent("state")
        #expect(
            bridge.waitUntil(timeout: 30) { _ in OutboxProbe.pendingIDs(stateDir: stateDir).count >= 100 },
            "\(bridge.stderr.suffix(3000))"
        )
        // The outbox is full and the receiver down: the snapshot can only wait, and must not call itself done.
        #expect(bridge.waitForLog("sink full, waiting at its cursor", timeout: 20), "\(bridge.stderr.suffix(3000))")
        let saidDone = bridge.stderr.contains("snapshot done")
        let dropped = bridge.stderr.contains("dropping")
        #expect(!saidDone && !dropped, "\(bridge.stderr.suffix(3000))")

        try receiver.up()
        #expect(
            bridge.waitUntil(timeout: 120) { _ in snapshotIDs(receiver).count >= total },
            "\(snapshotIDs(receiver).count) of \(total): \(bridge.stderr.suffix(3000))"
        )
        #expect(snapshotIDs(receiver).count == total)
        #expect(bridge.waitForLog("snapshot done", timeout: 20), "\(bridge.stderr.suffix(3000))")
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        let metrics = try ParsedMetrics(parsing: HTTPFetch.get(base + "/metrics").text)
        let drops = (metrics.samples["directus_bridge_sink_dropped"] ?? []).map(\.value)
        #expect(drops == [0], "\(drops)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func aSnapshotIntoASlowWebhookWithASmallOutboxDeliversEveryItem() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        let total = try seed(emulator, count: 2000)
        try receiver.script(steps: [], randomDelayMs: [1, 5])
        let bridge = try BridgeProcess.run(config: config(emulator, receiver, maxOutbox: 50))
        #expect(
            bridge.waitUntil(timeout: 120) { _ in snapshotIDs(receiver).count >= total },
            "\(snapshotIDs(receiver).count) of \(total): \(bridge.stderr.suffix(3000))"
        )
        #expect(bridge.waitForLog("snapshot done", timeout: 20), "\(bridge.stderr.suffix(3000))")
        let dropped = bridge.stderr.contains("dropping")
        #expect(!dropped, "\(bridge.stderr.suffix(3000))")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func aResyncIntoAFullWebhookDeliversEveryItem() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        let total = try seed(emulator, count: 2500)
        let yaml = config(emulator, receiver).replacingOccurrences(of: "    snapshot: true\n", with: "")
        let first = try BridgeProcess.run(config: yaml)
        #expect(first.waitForLog("reading the activity log"), "\(first.stderr)")
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0)
        let resync = try BridgeProcess(
            arguments: ["resync", "articles", "--config", "bridge.yaml"],
            directory: first.directory
        )
        #expect(resync.waitForExit() == 0, "\(resync.stderr)")

        try receiver.down(milliseconds: 3000)
        let second = try BridgeProcess.run(config: yaml, in: first.directory)
        #expect(
            second.waitUntil(timeout: 120) { _ in snapshotIDs(receiver).count >= total },
            "\(snapshotIDs(receiver).count) of \(total): \(second.stderr.suffix(3000))"
        )
        #expect(second.waitForLog("snapshot done", timeout: 20), "\(second.stderr.suffix(3000))")
        let dropped = second.stderr.contains("dropping")
        #expect(!dropped, "\(second.stderr.suffix(3000))")
        second.send(SIGTERM)
        #expect(second.waitForExit() == 0)
    }

    /// An item that existed at the snapshot's watermark but was deleted while the snapshot waited for the sink, before
    /// its page was read, still gets its snapshot line (`data` null: it is gone) ahead of its delete: the snapshot
    /// gives every item of its watermark (found by the soak, where the webhook's and JetStream's snapshots, held back
    /// by a down receiver, lacked an item the NDJSON and Kafka sinks had read before the delete).
    @Test func anItemDeletedWhileTheSnapshotWaitsKeepsItsLineBeforeItsDelete() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        let total = try seed(emulator, count: 2500)
        let last = try #require(try emulator.keys(of: "articles").compactMap { Int($0) }.max())
        try receiver.down()
        // A queue of one batch: the first page waits at the full outbox, the second in the queue, the third to be
        // queued and the fourth is read ahead (while the log is read after the third), and the last page, the sixth,
        // with the last item, cannot be read before the receiver is back (a longer queue lets a fast reader read
        // every page at once, before the delete; with 1,500 items the page read ahead was the last one).
        let yaml = config(emulator, receiver).replacingOccurrences(of: "max_queue: 100000", with: "max_queue: 1")
        #expect(yaml.contains("max_queue: 1\n"))
        let bridge = try BridgeProcess.run(config: yaml)
        #expect(bridge.waitForLog("sink full, waiting at its cursor", timeout: 30), "\(bridge.stderr.suffix(3000))")
        _ = try emulator.rest("DELETE", "/items/articles/\(last)")
        try receiver.up()
        #expect(
            bridge.waitUntil(timeout: 120) { _ in snapshotIDs(receiver).count >= total },
            "\(snapshotIDs(receiver).count) of \(total): \(bridge.stderr.suffix(3000))"
        )
        #expect(snapshotIDs(receiver).count == total)
        #expect(
            bridge.waitUntil(timeout: 30) { _ in
                ((try? receiver.delivered()) ?? []).contains { $0.json["event"] as? String == "delete" }
            }
        )
        let ofLast = try receiver.delivered().filter { $0.json["key"] as? String == String(last) }
        let events = ofLast.sorted { $0.n < $1.n }.map { $0.json["event"] as? String ?? "" }
        #expect(events == ["snapshot", "delete"], "\(events)")
        #expect(ofLast.first.map { $0.json["data"] is NSNull } == true, "\(ofLast.first?.body ?? "")")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    /// A `resync` asked while the snapshot waits for a sink that takes nothing (the operator trial of
    /// docs/RELIABILITY.md, "Brokers that are full") is taken within the contract's 10 seconds, the sink still down:
    /// the new snapshot supersedes the waiting one and `status` shows its watermark, no request left. Once the sink
    /// is back it holds every item of the new snapshot. Here the reader waits to put a page on the full queue.
    @Test func aResyncAskedWhileASnapshotPageWaitsForTheQueueIsTakenAtOnce() throws {
        try resyncWhileTheSnapshotWaits(maxQueue: 1)
    }

    /// The same while every page is queued and the snapshot waits to be durable; no change since its watermark, so
    /// the new snapshot has the same watermark, and its completion alone may finish it.
    @Test func aResyncAskedWhileASnapshotWaitsToBeDurableIsTakenAtOnce() throws {
        try resyncWhileTheSnapshotWaits(maxQueue: 100_000)
    }

    private func resyncWhileTheSnapshotWaits(maxQueue: Int) throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        var total = try seed(emulator, count: 1500)
        try receiver.down()
        let yaml = config(emulator, receiver).replacingOccurrences(
            of: "max_queue: 100000",
            with: "max_queue: \(maxQueue)"
        )
        let bridge = try BridgeProcess.run(config: yaml)
        #expect(bridge.waitForLog("sink full, waiting at its cursor", timeout: 30), "\(bridge.stderr.suffix(3000))")
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        let address = try #require(bridge.operationsAddress)
        let labels = ["subscription": "articles"]
        let itemsRead = {
            ((try? ParsedMetrics(parsing: HTTPFetch.get(base + "/metrics").text))?.value(
                "directus_bridge_snapshot_done_items",
                labels
            )) ?? 0
        }
        if maxQueue == 1 {
            // A change: the resync's watermark is newer than the first snapshot's.
            _ = try emulator.create("articles", ["title": "made before the resync"])
            total += 1
        } else {
            #expect(
                bridge.waitUntil(timeout: 30) { _ in itemsRead() >= Double(total) },
                "\(bridge.stderr.suffix(3000))"
            )
        }
        let resync = try BridgeProcess(
            arguments: ["resync", "articles", "--config", "bridge.yaml"],
            directory: bridge.directory
        )
        #expect(resync.waitForExit() == 0, "\(resync.stderr)")
        // The watcher reads every 2 s: 10 s is the contract, the rest the patience of a loaded machine.
        #expect(
            bridge.waitForLog("resync requested: the subscription is snapshotted again", timeout: 20),
            "\(bridge.stderr.suffix(3000))"
        )
        #expect(bridge.waitForLog("snapshot superseded by a resync", timeout: 5), "\(bridge.stderr.suffix(3000))")
        let watermark = try emulator.newestActivityID()
        try yaml.replacingOccurrences(of: "listen: \"127.0.0.1:0\"", with: "listen: \"\(address)\"").write(
            to: bridge.directory.appendingPathComponent("status.yaml"),
            atomically: true,
            encoding: .utf8
        )
        let status = try BridgeProcess(arguments: ["status", "--config", "status.yaml"], directory: bridge.directory)
        #expect(status.waitForExit() == 0, "\(status.stderr)")
        let line = status.lines.first { $0.hasPrefix("subscription  articles") } ?? "\(status.lines)"
        // Taken: the new watermark, no request left. With a change made before the request (maxQueue 1), the new
        // snapshot runs once that change, below its watermark, is queued, which waits for the sink: `pending` until
        // then (ResyncGapTests); without one it runs at once.
        let state = maxQueue == 1 ? "snapshot (running|pending)" : "snapshot running"
        #expect(
            line.range(of: "\(state) \\(watermark \(watermark)\\)", options: .regularExpression) != nil
                && !line.contains("resync"),
            "\(line)"
        )
        #expect(!bridge.stderr.contains("snapshot done"), "\(bridge.stderr.suffix(3000))")

        try receiver.up()
        let ofResync = { () -> Set<String> in
            Set(
                ((try? receiver.delivered()) ?? []).filter { $0.json["event"] as? String == "snapshot" }.map(\.id)
                    .filter { $0.hasSuffix("_\(watermark)") }
            )
        }
        let snapshotLines = {
            ((try? receiver.delivered()) ?? []).filter { $0.json["event"] as? String == "snapshot" }.count
        }
        // Every item of the resync; with the same watermark, every line of both snapshots (the first was queued).
        #expect(
            bridge.waitUntil(timeout: 120) { _ in
                ofResync().count >= total && (maxQueue == 1 || snapshotLines() >= 2 * total)
            },
            "\(ofResync().count) of \(total), \(snapshotLines()) lines: \(bridge.stderr.suffix(3000))"
        )
        #expect(ofResync().count == total)
        #expect(bridge.waitForLog("snapshot done", timeout: 20), "\(bridge.stderr.suffix(3000))")
        #expect(!bridge.stderr.contains("dropping"), "\(bridge.stderr.suffix(3000))")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
