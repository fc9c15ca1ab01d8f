import BridgeTestSupport
import Foundation
import Testing

/// `state/webhooks.db` deleted under a running bridge (`rm state/webhooks.db*`) while its webhook's receiver is
/// down, with the shipped binary (docs/RELIABILITY.md, "Careless or hostile operators"). Was: the rows accepted
/// before the `rm` stayed in the deleted file (the next start found an empty outbox: never delivered), and every
/// later batch failed its sync with "deleted or moved … restart the bridge" until a restart.
@Suite(.serialized) struct OutboxFileGoneEndToEndTests {
    @Test func webhooksDBDeletedWhileTheReceiverIsDownLosesNothingAndRepeatsNothing() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        let config = webhookConfig(
            url: emulator.url,
            sinks: webhookSink(receiver.hookURL(), "retry_schedule: [200ms, 500ms, 1s]\nmax_attempts: 1000"))
        try receiver.down()
        let first = try BridgeProcess.run(config: config)
        let stateDir = first.directory.appendingPathComponent("state")
        #expect(first.waitUntilConnected(), "\(first.stderr)")
        try emulator.rest("POST", "/items/articles", (0..<20).map { ["title": "before \($0)"] })
        #expect(first.waitUntil { _ in OutboxProbe.pendingIDs(stateDir: stateDir).count == 20 }, "\(first.stderr)")

        let outbox = stateDir.appendingPathComponent("webhooks.db").path
        for suffix in ["", "-wal", "-shm"] { unlink(outbox + suffix) }
        #expect(
            first.waitForLog("the outbox and the dead letters were copied into a new file", timeout: 20), "\(first.stderr.suffix(3000))")
        try emulator.rest("POST", "/items/articles", (0..<10).map { ["title": "after \($0)"] })
        #expect(
            first.waitUntil(timeout: 20) { _ in OutboxProbe.pendingIDs(stateDir: stateDir).count == 30 },
            "\(first.stderr.suffix(3000))")
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0, "\(first.stderr.suffix(3000))")
        let pending = Set(OutboxProbe.pendingIDs(stateDir: stateDir))
        #expect(pending.count == 30)
        #expect(try receiver.delivered().isEmpty)

        let second = try BridgeProcess.run(config: config, in: first.directory)
        #expect(second.waitUntilConnected(), "\(second.stderr)")
        try receiver.up()
        let ids = { Set(((try? receiver.delivered()) ?? []).map(\.id)) }
        #expect(second.waitUntil(timeout: 30) { _ in ids().count >= 30 }, "\(second.stderr.suffix(3000))")
        #expect(second.waitUntil { _ in OutboxProbe.pendingIDs(stateDir: stateDir).isEmpty })
        let delivered = try receiver.delivered().map(\.id)
        #expect(Set(delivered) == pending, "lost: \(pending.subtracting(delivered))")
        #expect(delivered.count == pending.count, "delivered twice: \(delivered.count) requests for \(pending.count)")
        second.send(SIGTERM)
        #expect(second.waitForExit() == 0)
    }
}
