import BridgeTestSupport
import Foundation
import Testing

/// Contract, "The delivery guarantee, per mode": in activity mode every change reaches every sink that selects it,
/// whatever its origin — a `resync` included — and per item in the order Directus made them. A `resync` beside a
/// running bridge snapshots from the newest activity id; a sink that is down holds its reader far below that id
/// (the changes of the whole outage). Those changes still reach the sink, before the snapshot's lines: a delete among
/// them is in no snapshot (the item is gone at the watermark). With `--sink NAME` the other sinks see no snapshot and
/// every change once.
@Suite(.serialized) struct ResyncGapEndToEndTests {
    /// The items of `articles` now.
    private func keys(_ emulator: Emulator) throws -> Set<String> {
        let answer = try emulator.rest("GET", "/items/articles?fields=id&limit=-1") as? [String: Any]
        return Set((answer?["data"] as? [[String: Any]] ?? []).compactMap { ($0["id"]).map { "\($0)" } })
    }

    /// Whether the bridge logged that it took a request of `articles`.
    private func taken(_ bridge: BridgeProcess) -> Bool {
        bridge.stderr.contains("resync requested: the subscription is snapshotted again")
    }

    /// The run: 30 articles before the bridge starts; the webhook receiver goes down (an outbox of 5 and a queue of
    /// one batch: the reader waits at the sink's cursor); 150 mixed changes, then the delete of 10 of the first items;
    /// `resync articles` (`--sink hook` when `sink`) taken while the receiver is still down; then an update of an
    /// item changed in the gap and a delete after the watermark; the receiver back. Returns what the receiver got,
    /// the NDJSON sink's lines (when `ndjson`), the changes Directus recorded after the bridge started, the items
    /// before them, and the watermark.
    private func run(ndjson: Bool, sink: String?) throws -> (
        hook: [DeliveredEvent], archive: [DeliveredEvent], recorded: [RecordedChange], initial: Set<String>,
        watermark: Int
    ) {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try emulator.rest("POST", "/items/articles", (0..<30).map { ["title": "first \($0)"] })
        let initial = try keys(emulator)
        let start = try emulator.newestActivityID()
        let sinks =
            (ndjson ? "  - type: ndjson\n    name: archive\n    path: \"-\"\n" : "")
            + webhookSink(
                receiver.hookURL("/hook"),
                "name: hook\nmax_outbox: 5\nretry_schedule: [100ms]\nmax_attempts: 1000"
            )
        let yaml = webhookConfig(url: emulator.url, sinks: sinks, maxQueue: 1, operations: true, mode: "activity")
        let bridge = try BridgeProcess.run(config: yaml)
        #expect(bridge.waitForLog("reading the activity log", timeout: 30), "\(bridge.stderr.suffix(3000))")

        try receiver.down()
        try emulator.control("generator", ["collection": "articles", "count": 150, "interval_ms": 0, "kind": "mixed"])
        try emulator.waitForGenerators(timeout: 60)
        // Late in the outage, far beyond what the sink's reader has read: 10 of the first items go.
        let doomed = try keys(emulator).intersection(initial).sorted { Int($0) ?? 0 < Int($1) ?? 0 }.prefix(10)
        #expect(doomed.count == 10)
        for key in doomed { try emulator.rest("DELETE", "/items/articles/\(key)") }
        #expect(bridge.waitForLog("sink full, waiting at its cursor", timeout: 30), "\(bridge.stderr.suffix(3000))")

        let resync = try BridgeProcess(
            arguments: ["resync", "articles", "--config", "bridge.yaml"] + (sink.map { ["--sink", $0] } ?? []),
            directory: bridge.directory
        )
        #expect(resync.waitForExit() == 0, "\(resync.stderr)")
        let asked = Date()
        // The watcher reads every 2 s: 10 s is the contract, the rest the patience of a loaded machine.
        #expect(bridge.waitUntil(timeout: 20) { taken($0) }, "\(bridge.stderr.suffix(3000))")
        print("resync beside a sink that is down: taken \(Date().timeIntervalSince(asked)) s after the command")
        let watermark = try emulator.newestActivityID()
        // After the watermark: an item the gap changed changes again, and one more goes.
        let left = try keys(emulator).sorted { Int($0) ?? 0 < Int($1) ?? 0 }
        let changedInGap = try #require(
            try emulator.recordedChanges(after: start).last { $0.action == "update" && left.contains($0.key) }?.key
        )
        try emulator.rest("PATCH", "/items/articles/\(changedInGap)", ["title": "after the watermark"])
        try emulator.rest("DELETE", "/items/articles/\(try #require(left.last { $0 != changedInGap }))")
        let recorded = try emulator.recordedChanges(after: start)
        let expected = Set(recorded.map { "act_\($0.id)" })

        try receiver.up()
        let back = Date()
        let hook = { ((try? receiver.delivered()) ?? []).compactMap { DeliveredEvent(json: $0.json) } }
        #expect(
            bridge.waitUntil(timeout: 120) { _ in expected.isSubset(of: Set(hook().map(\.id))) },
            "\(expected.subtracting(hook().map(\.id)).count) of \(expected.count) changes missing: \(bridge.stderr.suffix(3000))"
        )
        print(
            "resync beside a sink that is down: every change delivered \(Date().timeIntervalSince(back)) s after the receiver was back"
        )
        #expect(bridge.waitForLog("snapshot done", timeout: 60), "\(bridge.stderr.suffix(3000))")
        if ndjson {
            #expect(
                bridge.waitUntil(timeout: 60) { expected.isSubset(of: Set($0.eventIDs)) },
                "\(bridge.stderr.suffix(3000))"
            )
        }
        let archive = ndjson ? bridge.events.compactMap { DeliveredEvent(json: $0) } : []
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        return (hook(), archive, recorded, initial, watermark)
    }

    /// Checks what the sink that took the resync holds: every change (those between its cursor and the watermark
    /// included, each delete there among them), the snapshot at the watermark, per item in order.
    private func checkResynced(
        _ events: [DeliveredEvent],
        recorded: [RecordedChange],
        initial: Set<String>,
        watermark: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let delivered = Set(events.map(\.id))
        let missing = recorded.filter { !delivered.contains("act_\($0.id)") }
        let gapDeletes = recorded.filter { $0.action == "delete" && $0.id <= watermark }
        print(
            "resync beside a sink that is down: watermark \(watermark), \(recorded.count) changes, "
                + "\(gapDeletes.count) deletes up to the watermark, \(missing.count) missing"
        )
        #expect(gapDeletes.count >= 10, "\(gapDeletes.count)", sourceLocation: sourceLocation)
        #expect(
            missing.isEmpty,
            "\(missing.count) changes never arrived: \(missing.prefix(10).map { "\($0.id) \($0.action) \($0.key)" })",
            sourceLocation: sourceLocation
        )
        // The snapshot at the watermark, whole, and per item in order (changes up to the watermark, the snapshot line,
        // the changes after it); no repeat without a crash.
        let check = DeliveryGuaranteeCheck(recorded: recorded, initialKeys: initial, crashed: false)
        #expect(DeliveryGuaranteeCheck.watermark(of: events) == [watermark], sourceLocation: sourceLocation)
        check.checkActivity(events, snapshotExpected: true, sourceLocation: sourceLocation)
    }

    /// `resync articles` while the only sink (a webhook) is down: every change of the outage arrives, the deletes
    /// among them too. Failed before: the changes between the sink's reader and the watermark never came (10 and
    /// more deletes lost).
    @Test func theChangesOfAnOutageReachTheSinkBeforeTheResyncsSnapshot() throws {
        let run = try run(ndjson: false, sink: nil)
        checkResynced(run.hook, recorded: run.recorded, initial: run.initial, watermark: run.watermark)
    }

    /// `resync articles --sink hook` while the webhook is down and an NDJSON sink beside it is not: the webhook gets
    /// what the test above asks; the NDJSON sink no snapshot and every change once.
    @Test func aResyncOfOneSinkLeavesTheOtherSinkAsItWas() throws {
        let run = try run(ndjson: true, sink: "hook")
        checkResynced(run.hook, recorded: run.recorded, initial: run.initial, watermark: run.watermark)
        #expect(!run.archive.contains { $0.event == "snapshot" }, "the NDJSON sink was not resynced")
        #expect(run.archive.map(\.id) == run.recorded.map { "act_\($0.id)" }, "every change once, in order")
    }
}
