import BridgeTestSupport
import Foundation
import Testing

/// Issue 10: SIGKILL while webhook deliveries are in flight, in live mode (where nothing can be read again from
/// Directus). An event is *accepted* by a webhook sink once its row is committed to the outbox
/// (`<state_dir>/webhooks.db`); every accepted event is delivered after the restart, with the same `webhook-id`
/// and body (README, "Webhooks", Outbox).
@Suite(.serialized) struct WebhookCrashTests {
    @Test func sigkillDuringLiveDeliveriesLosesNoAcceptedEvent() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        // Six requests are answered at once; the next four are held open, so four attempts are in flight (sent,
        // unanswered) when the process is killed.
        let held = (0..<4).map { _ in ["hold": "after-the-kill", "status": 204] as [String: Any] }
        try receiver.script(steps: Array(repeating: ["status": 204], count: 6) + held)
        let config = webhookConfig(
            url: emulator.url, sinks: webhookSink(receiver.hookURL(), "max_in_flight: 4\nretry_schedule: [200ms]"))
        let bridge = try BridgeProcess.run(config: config)
        let stateDir = bridge.directory.appendingPathComponent("state")
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let created = try emulator.rest("POST", "/items/articles", (0..<40).map { ["title": "crash \($0)"] })
        let keys = Set(((created as? [String: Any])?["data"] as? [[String: Any]] ?? []).map { "\($0["id"]!)" })
        #expect(keys.count == 40)

        // Accepted = in the outbox, or already delivered (a row leaves the outbox only after its 2xx). Read the
        // outbox first: an id that leaves it between the two reads is then among the delivered.
        func accepted() -> Set<String> {
            let pending = OutboxProbe.pendingIDs(stateDir: stateDir)
            return Set(pending).union(((try? receiver.delivered()) ?? []).map(\.id))
        }
        #expect(bridge.waitUntil(timeout: 30) { _ in accepted().count >= 40 }, "\(bridge.stderr)")
        #expect(
            bridge.waitUntil(timeout: 30) { _ in ((try? receiver.requests().count) ?? 0) >= 10 }, "\(bridge.stderr)")
        let acceptedBeforeKill = accepted()
        bridge.send(SIGKILL)
        #expect(bridge.waitForExit() == SIGKILL)
        let deliveredBeforeKill = try receiver.delivered()
        #expect(deliveredBeforeKill.count == 6, "the held attempts were still in flight")
        // The receiver sees the held attempts' connections end unanswered: never delivered, so due after restart.
        #expect(bridge.waitUntil { _ in ((try? receiver.requests()) ?? []).filter(\.aborted).count == 4 })

        let restarted = try BridgeProcess.run(config: config, in: bridge.directory)
        #expect(
            restarted.waitUntil(timeout: 30) { _ in
                Set(((try? receiver.delivered()) ?? []).map(\.id)).isSuperset(of: acceptedBeforeKill)
            },
            "\(restarted.stderr.suffix(3000))")
        #expect(restarted.waitUntil { _ in OutboxProbe.pendingIDs(stateDir: stateDir).isEmpty })
        let delivered = try receiver.delivered()
        // Every change once at least, under the id it was accepted with; nothing new was invented after restart.
        #expect(Set(delivered.map(\.id)) == acceptedBeforeKill)
        #expect(Set(delivered.compactMap { $0.json["key"] as? String }) == keys)
        // A redelivered event (its 2xx came in before the kill, its row's removal did not commit) is the same bytes.
        let bodies = Dictionary(grouping: delivered, by: \.id).mapValues { Set($0.map(\.body)) }
        #expect(bodies.values.allSatisfy { $0.count == 1 })
        restarted.send(SIGTERM)
        #expect(restarted.waitForExit() == 0)
    }
}
