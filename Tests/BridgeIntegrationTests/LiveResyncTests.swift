import BridgeTestSupport
import Foundation
import Testing

/// Contract, "Commands": `resync` on a running bridge takes effect within 10 seconds, without a restart, into every
/// sink that selects the subscription or into the one named by `--sink` (real binary, emulator).
@Suite(.serialized) struct LiveResyncTests {
    @Test func resyncOnARunningBridgeSnapshotsAgainIntoEverySinkOrTheNamedOne() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try emulator.rest("POST", "/items/articles", (0..<1200).map { ["title": "item \($0)"] })
        let total = try emulator.keys(of: "articles").count
        let sinks = "  - type: ndjson\n    path: \"-\"\n" + webhookSink(receiver.hookURL("/hook"), "max_outbox: 100")
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: sinks, operations: true, mode: "activity"))
        #expect(bridge.waitForLog("reading the activity log"), "\(bridge.stderr)")
        let before = try emulator.create("articles", ["title": "streamed before the resync"])
        #expect(bridge.waitUntil { $0.events.contains { $0["key"] as? String == before } }, "\(bridge.stderr)")

        // Both sinks: each gets every item as a snapshot line, then the stream goes on.
        let resync = try BridgeProcess(
            arguments: ["resync", "articles", "--config", "bridge.yaml"], directory: bridge.directory)
        #expect(resync.waitForExit() == 0, "\(resync.stderr)")
        // Within the contract's 10 seconds (stretched by the test patience on a loaded machine).
        #expect(bridge.waitForLog("resync requested", timeout: 10), "\(bridge.stderr.suffix(3000))")
        let snapshotKeys = { (events: [[String: Any]]) in
            Set(events.filter { $0["event"] as? String == "snapshot" }.compactMap { $0["key"] as? String })
        }
        #expect(
            bridge.waitUntil(timeout: 60) { snapshotKeys($0.events).count >= total + 1 }, "\(bridge.stderr.suffix(3000))")
        #expect(
            bridge.waitUntil(timeout: 60) { _ in
                snapshotKeys(((try? receiver.delivered()) ?? []).map(\.json)).count >= total + 1
            }, "\(bridge.stderr.suffix(3000))")
        let after = try emulator.create("articles", ["title": "streamed after the resync"])
        #expect(bridge.waitUntil { $0.events.contains { $0["key"] as? String == after } }, "\(bridge.stderr)")

        // --sink 1: only the webhook sink snapshots again; the NDJSON sink's stream sees nothing of it.
        let ndjsonSnapshots = bridge.events.filter { $0["event"] as? String == "snapshot" }.count
        let webhookSnapshots = try receiver.delivered().filter { $0.json["event"] as? String == "snapshot" }.count
        let one = try BridgeProcess(
            arguments: ["resync", "articles", "--sink", "1", "--config", "bridge.yaml"], directory: bridge.directory)
        #expect(one.waitForExit() == 0, "\(one.stderr)")
        #expect(
            bridge.waitUntil(timeout: 60) { _ in
                let delivered = (try? receiver.delivered()) ?? []
                return delivered.filter { $0.json["event"] as? String == "snapshot" }.count >= webhookSnapshots + total + 2
            }, "\(bridge.stderr.suffix(3000))")
        // A later change reaches the NDJSON sink after anything the resync could have sent it.
        let sentinel = try emulator.create("articles", ["title": "sentinel"])
        #expect(bridge.waitUntil { $0.events.contains { $0["key"] as? String == sentinel } }, "\(bridge.stderr)")
        let ndjsonSnapshotsAfter = bridge.events.filter { $0["event"] as? String == "snapshot" }.count
        #expect(ndjsonSnapshotsAfter == ndjsonSnapshots)

        // An unknown sink is a usage error naming the sinks there are.
        let unknown = try BridgeProcess(
            arguments: ["resync", "articles", "--sink", "7", "--config", "bridge.yaml"], directory: bridge.directory)
        #expect(unknown.waitForExit() == 64, "\(unknown.stderr)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
