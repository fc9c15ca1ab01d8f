import BridgeTestSupport
import Foundation
import Testing

/// Webhooks across outages, restarts, shutdowns and backpressure, with the real binary against the emulator.
@Suite(.serialized) struct WebhookRecoveryTests {
    @Test func aReceiverDownForTenSecondsAcrossABridgeRestartLosesNothing() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        let config = webhookConfig(
            url: emulator.url,
            sinks: webhookSink(receiver.hookURL(), "retry_schedule: [200ms, 500ms, 1s]\nmax_attempts: 1000")
        )
        try receiver.down()
        let downSince = Date()
        let first = try BridgeProcess.run(config: config)
        let stateDir = first.directory.appendingPathComponent("state")
        #expect(first.waitUntilConnected(), "\(first.stderr)")
        let created = try emulator.rest("POST", "/items/articles", (0..<100).map { ["title": "down \($0)"] })
        let keys = ((created as? [String: Any])?["data"] as? [[String: Any]] ?? []).map { "\($0["id"]!)" }
        #expect(first.waitUntil { _ in OutboxProbe.pendingIDs(stateDir: stateDir).count == 100 }, "\(first.stderr)")
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0)

        // Live mode only sees changes while it runs: the next 100 happen after the restart.
        let second = try BridgeProcess.run(config: config, in: first.directory)
        #expect(second.waitUntilConnected(), "\(second.stderr)")
        try emulator.rest("PATCH", "/items/articles", keys.map { ["id": Int($0)!, "title": "updated"] })
        #expect(second.waitUntil { _ in OutboxProbe.pendingIDs(stateDir: stateDir).count == 200 }, "\(second.stderr)")
        let pending = Set(OutboxProbe.pendingIDs(stateDir: stateDir))
        #expect(try receiver.requests().isEmpty)
        let remaining = 10 - Date().timeIntervalSince(downSince)
        if remaining > 0 { usleep(UInt32(remaining * 1_000_000)) }
        try receiver.up()

        #expect(
            second.waitUntil(timeout: 20) { _ in Set(((try? receiver.delivered()) ?? []).map(\.id)).count >= 200 },
            "\(second.stderr.suffix(2000))"
        )
        #expect(Set(try receiver.delivered().map(\.id)) == pending)
        #expect(second.waitUntil { _ in OutboxProbe.pendingIDs(stateDir: stateDir).isEmpty })
        second.send(SIGTERM)
        #expect(second.waitForExit() == 0)
    }

    @Test func sigtermWithDeliveriesInFlightExitsZeroAndLosesNothing() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(defaultStep: ["status": 204, "delay_ms": 1000])
        let config = webhookConfig(url: emulator.url, sinks: webhookSink(receiver.hookURL(), "max_in_flight: 4"))
        let bridge = try BridgeProcess.run(config: config)
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.rest("POST", "/items/articles", (0..<8).map { ["title": "in flight \($0)"] })
        #expect(bridge.waitUntil { _ in ((try? receiver.requests().count) ?? 0) >= 4 })
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        // Every attempt the bridge started finishes during the drain. Not "exactly 4": on a loaded machine one may
        // finish and a fifth start before the signal arrives.
        let firstRun = try receiver.delivered()
        let attempted = try receiver.requests().count
        #expect(firstRun.count >= 4 && firstRun.count == attempted, "none abandoned: \(attempted) attempted")

        try receiver.script()
        let restarted = try BridgeProcess.run(config: config, in: bridge.directory)
        #expect(
            restarted.waitUntil { _ in ((try? receiver.delivered().count) ?? 0) >= 8 },
            "\(restarted.stderr)"
        )
        // Live mode sees the sentinel only once connected (the outbox may have been delivered before).
        #expect(restarted.waitUntilConnected(), "\(restarted.stderr)")
        let sentinel = try emulator.create("articles", ["title": "sentinel"])
        let delivered = try #require(try receiver.requests(beforeSentinel: sentinel), "\(restarted.stderr)")
            .filter(\.delivered)
        #expect(delivered.count == 8)
        #expect(Set(delivered.map(\.id)).count == 8)
        restarted.send(SIGTERM)
        #expect(restarted.waitForExit() == 0)
    }

    @Test func aDrainPastShutdownTimeoutExitsZeroAndDeliversAfterRestart() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(defaultStep: ["hang": true])
        let config = webhookConfig(url: emulator.url, sinks: webhookSink(receiver.hookURL()), shutdownTimeout: "1s")
        let bridge = try BridgeProcess.run(config: config)
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.create("articles", ["title": "stuck"])
        #expect(bridge.waitUntil { _ in ((try? receiver.requests().count) ?? 0) >= 1 })
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit(timeout: 5) == 0)

        try receiver.script()
        let restarted = try BridgeProcess.run(config: config, in: bridge.directory)
        #expect(restarted.waitUntil { _ in ((try? receiver.delivered().count) ?? 0) >= 1 }, "\(restarted.stderr)")
        #expect(Set(try receiver.requests().map(\.id)).count == 1)
        restarted.send(SIGTERM)
        #expect(restarted.waitForExit() == 0)
    }

    @Test func aFullOutboxMakesLiveModeDropForThatSinkAndCountIt() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        let (bridge, stateDir) = try startWithReceiverDown(emulator, receiver, maxOutbox: 3, maxQueue: 5)
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        for index in 0..<20 { try emulator.create("articles", ["title": "burst \(index)"]) }
        #expect(bridge.waitForLog("dropping live events for this sink"), "\(bridge.stderr)")
        #expect(bridge.stderr.contains("outbox full"))
        #expect(OutboxProbe.pendingIDs(stateDir: stateDir).count == 3)

        try receiver.up()
        // What was accepted (3 in the outbox, up to 5 in the sink's inbox) is delivered; the rest was dropped and
        // counted. Once the outbox has room, new events are accepted again.
        #expect(bridge.waitUntil { _ in OutboxProbe.pendingIDs(stateDir: stateDir).isEmpty })
        let key = try emulator.create("articles", ["title": "after"])
        #expect(
            bridge.waitUntil { _ in ((try? receiver.delivered()) ?? []).contains { $0.json["key"] as? String == key } },
            "\(bridge.stderr.suffix(2000))")
        #expect(bridge.waitForLog("sink accepting again after dropping live events"), "\(bridge.stderr.suffix(2000))")
        let delivered = try receiver.delivered()
        #expect(delivered.count >= 4 && delivered.count <= 10, "\(delivered.count)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func activityModeWaitsAtItsCursorWhileTheOutboxIsFullAndLosesNothing() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        let (bridge, stateDir) = try startWithReceiverDown(emulator, receiver, maxOutbox: 1, mode: "activity")
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        var keys: [String] = []
        for wave in 0..<3 {
            for index in 0..<10 { keys.append(try emulator.create("articles", ["title": "wave \(wave) #\(index)"])) }
            usleep(300_000)
        }
        #expect(bridge.waitForLog("outbox full"), "\(bridge.stderr.suffix(2000))")
        #expect(OutboxProbe.pendingIDs(stateDir: stateDir).count < 30)

        try receiver.up()
        #expect(
            bridge.waitUntil(timeout: 30) { _ in Set(((try? receiver.delivered()) ?? []).map(\.id)).count >= 30 },
            "\(bridge.stderr.suffix(2000))"
        )
        let delivered = try receiver.delivered()
        #expect(Set(delivered.map(\.id)).count == 30)
        #expect(delivered.allSatisfy { $0.id.hasPrefix("act_") })
        #expect(Set(delivered.compactMap { $0.json["key"] as? String }) == Set(keys))
        #expect(!bridge.stderr.contains("dropping"), "activity mode waits instead of dropping")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    /// Takes the receiver down and starts a bridge whose webhook sink holds at most `maxOutbox` events and retries
    /// every 100 ms; returns it with its state directory.
    private func startWithReceiverDown(
        _ emulator: Emulator,
        _ receiver: WebhookReceiver,
        maxOutbox: Int,
        maxQueue: Int = 100_000,
        mode: String = "live"
    ) throws -> (BridgeProcess, URL) {
        try receiver.down()
        let sink = webhookSink(receiver.hookURL(), "max_outbox: \(maxOutbox)\nretry_schedule: [100ms]\nmax_attempts: 1000")
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url, sinks: sink, maxQueue: maxQueue, mode: mode))
        return (bridge, bridge.directory.appendingPathComponent("state"))
    }
}
