import BridgeTestSupport
import Foundation
import Testing

/// Webhook retry times and the wall clock, with the real binary against the emulator (docs/RELIABILITY.md, "Careless
/// or hostile operators").
@Suite(.serialized) struct WebhookClockTests {
    /// A bridge whose wall clock ran a day ahead (a VM restored from a snapshot, a clock without a battery, then an NTP
    /// step back) wrote its retry times a day ahead. The next run holds such a time to the sink's longest wait: the
    /// row and the next event of its item are delivered within seconds. Before: both waited the day, without a word.
    @Test func aRetryTimeWrittenByAClockADayAheadWaitsNoLongerThanTheSchedule() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(defaultStep: ["status": 503])
        let config = webhookConfig(
            url: emulator.url,
            sinks: webhookSink(receiver.hookURL(), "retry_schedule: [1s]\nmax_attempts: 1000"),
            mode: "activity"
        )
        let first = try BridgeProcess.run(config: config)
        let stateDir = first.directory.appendingPathComponent("state")
        #expect(first.waitUntilConnected(), "\(first.stderr)")
        let key = try emulator.create("articles", ["title": "before the clock was set back"])
        #expect(first.waitUntil { _ in ((try? receiver.requests().count) ?? 0) >= 1 }, "\(first.stderr)")
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0)
        let waiting = OutboxProbe.pendingIDs(stateDir: stateDir)
        #expect(waiting.count == 1)

        try OutboxProbe.execute(stateDir: stateDir, "UPDATE outbox SET next_attempt_at = next_attempt_at + 86400000")
        try receiver.script()
        let second = try BridgeProcess.run(config: config, in: first.directory)
        #expect(second.waitUntilConnected(), "\(second.stderr)")
        try emulator.rest("PATCH", "/items/articles/\(key)", ["title": "after"])
        #expect(
            second.waitUntil(timeout: 30) { _ in ((try? receiver.delivered().count) ?? 0) >= 2 },
            "\(second.stderr.suffix(2000))"
        )
        let delivered = try receiver.delivered().map(\.id)
        #expect(delivered.count == 2 && delivered.first == waiting.first, "item order kept: \(delivered)")
        second.send(SIGTERM)
        #expect(second.waitForExit() == 0)
    }
}
