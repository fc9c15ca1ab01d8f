import BridgeTestSupport
import Foundation
import Testing

/// Contract: "Sinks are independent" — a webhook sink whose receiver is down and whose outbox is full holds back
/// neither the NDJSON sink beside it nor its own events (real binary, emulator).
@Suite(.serialized) struct SinkIndependenceTests {
    /// NDJSON on stdout plus a webhook sink (`max_outbox: 50`) whose receiver refuses connections.
    private func config(_ emulator: Emulator, _ receiver: WebhookReceiver, mode: String) -> String {
        let sinks =
            "  - type: ndjson\n    path: \"-\"\n"
            + webhookSink(receiver.hookURL(), "max_outbox: 50\nretry_schedule: [100ms]\nmax_attempts: 1000")
        return webhookConfig(url: emulator.url, sinks: sinks, operations: true, mode: mode)
    }

    /// 150 creates then an update of each, ten per request (a live batch each): 300 changes, two per item.
    /// `afterFirstSixty` runs once the first 60 creates are made (so a test can wait for them to arrive first).
    private func makeChanges(_ emulator: Emulator, afterFirstSixty: () -> Void = {}) throws -> [String] {
        var keys: [String] = []
        for chunk in 0..<15 {
            if chunk == 6 { afterFirstSixty() }
            let created = try emulator.rest("POST", "/items/articles", (0..<10).map { ["title": "new \(chunk)-\($0)"] })
            keys += ((created as? [String: Any])?["data"] as? [[String: Any]] ?? []).map { "\($0["id"] ?? "")" }
        }
        for chunk in stride(from: 0, to: keys.count, by: 10) {
            let slice = keys[chunk..<min(chunk + 10, keys.count)]
            try emulator.rest("PATCH", "/items/articles", slice.map { ["id": Int($0) ?? 0, "title": "updated"] })
        }
        return keys
    }

    @Test func activityModeNDJSONGetsEveryChangeWhileTheWebhookIsDownAndTheWebhookCatchesUpInOrder() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.down()
        let bridge = try BridgeProcess.run(config: config(emulator, receiver, mode: "activity"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        // The first 60 reach the webhook's outbox (one page may hold them all): past max_outbox, every later batch
        // finds it full, however the reader pages the rest.
        let stateDir = bridge.directory.appendingPathComponent("state")
        let keys = try makeChanges(emulator) {
            _ = bridge.waitUntil(timeout: 20) { _ in OutboxProbe.pendingIDs(stateDir: stateDir).count >= 50 }
        }
        #expect(keys.count == 150)

        // The NDJSON sink gets all 300 while the webhook outbox is full.
        #expect(bridge.waitUntil(timeout: 20) { $0.eventIDs.count >= 300 }, "\(bridge.stderr.suffix(3000))")
        let ndjsonIDs = bridge.eventIDs
        #expect(Set(ndjsonIDs).count == 300)
        #expect(bridge.waitForLog("outbox full"), "\(bridge.stderr.suffix(2000))")
        #expect(try receiver.delivered().isEmpty)
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        let ready = try HTTPFetch.get(base + "/readyz").json
        let lag = try #require(ready["sink_lag"] as? [String: Any], "\(ready)")
        #expect(lag.count == 2, "\(lag)")
        #expect(lag.values.contains { ($0 as? Int ?? 0) > 0 }, "the webhook sink lags: \(lag)")

        // The receiver returns: the webhook sink catches up from its own cursor with the same ids, in order per item.
        try receiver.up()
        #expect(
            bridge.waitUntil(timeout: 60) { _ in Set(((try? receiver.delivered()) ?? []).map(\.id)).count >= 300 },
            "\(bridge.stderr.suffix(3000))"
        )
        let delivered = try receiver.delivered()
        #expect(Set(delivered.map(\.id)) == Set(ndjsonIDs))
        var eventsPerKey: [String: [String]] = [:]
        for request in delivered {
            guard let key = request.json["key"] as? String, let event = request.json["event"] as? String else { continue }
            if eventsPerKey[key]?.last != event { eventsPerKey[key, default: []].append(event) }
        }
        #expect(eventsPerKey.count == 150)
        #expect(eventsPerKey.values.allSatisfy { $0 == ["create", "update"] }, "\(eventsPerKey)")
        #expect(!bridge.stderr.contains("dropping live events"), "activity mode waits instead of dropping")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func liveModeAFullWebhookSinkDropsForItselfAloneAndCountsIt() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.down()
        let bridge = try BridgeProcess.run(config: config(emulator, receiver, mode: "live"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        _ = try makeChanges(emulator)
        #expect(bridge.waitUntil(timeout: 20) { $0.eventIDs.count >= 300 }, "\(bridge.stderr.suffix(3000))")
        #expect(bridge.waitForLog("dropping live events for this sink"), "\(bridge.stderr.suffix(2000))")
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        let metrics = try ParsedMetrics(parsing: HTTPFetch.get(base + "/metrics").text)
        let dropped = metrics.samples["directus_bridge_sink_dropped"] ?? []
        let webhookDropped = dropped.first { $0.labels["sink"]?.contains("127.0.0.1") == true }?.value ?? 0
        let ndjsonDropped = dropped.first { $0.labels["sink"]?.contains("ndjson") == true }?.value ?? -1
        #expect(webhookDropped == 250 && ndjsonDropped == 0, "\(dropped)")
        #expect(OutboxProbe.pendingIDs(stateDir: bridge.directory.appendingPathComponent("state")).count == 50)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
