import BridgeTestSupport
import Foundation
import Testing

extension JetStreamSinkTests {
    /// A stream made with `no_ack` stores what it is sent and never acknowledges it: the sink could never count an
    /// event delivered, and each retry after the duplicate window would store the event again. `check` fails naming
    /// it, and a running sink publishes nothing there: it logs why and waits, retrying, until the stream is fixed;
    /// then the events it held arrive, once each.
    @Test func aStreamThatNeverAcknowledgesFailsCheckAndGetsNothingUntilItIsFixed() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "jetstream-noack")
        let server = try NATSServer(name: "noack", in: directory)
        try server.start()
        try EventsStream.create([server], replicas: 1, acknowledging: false)
        let emulator = try Emulator()
        defer { emulator.stop() }
        let config = webhookConfig(url: emulator.url, sinks: sinks([server]), operations: true, mode: "live")

        let checkDirectory = try TestEnvironment.makeTemporaryDirectory(prefix: "jetstream-noack-check")
        try config.write(to: checkDirectory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let check = try BridgeProcess(arguments: ["check", "--config", "bridge.yaml"], directory: checkDirectory)
        #expect(check.waitForExit(timeout: 60) == 1)
        let line = check.lines.first { $0.contains("jetstream sinks[1] nats://") } ?? "missing: \(check.lines)"
        #expect(line.hasPrefix("FAIL ") && line.contains("EVENTS") && line.contains("no_ack"), "\(line)")

        let bridge = try BridgeProcess.run(config: config)
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.createArticles(3, title: "unacknowledged")
        #expect(bridge.waitUntil { $0.lines.count >= 3 }, "\(bridge.stderr.suffix(2000))")
        #expect(bridge.waitForLog("sink failed, retrying", timeout: 30), "\(bridge.stderr.suffix(2000))")
        let failed = bridge.stderr.split(separator: "\n").first { $0.contains("sink failed, retrying") } ?? ""
        #expect(failed.contains("ERROR") && failed.contains("no_ack"), "\(failed)")
        #expect(EventsStream.read([server]).isEmpty)

        let fixed = try PythonTool.run(
            script: "broker_peers/nats_admin.py",
            arguments: ["acknowledge-publishes", EventsStream.urls([server]), "EVENTS"])
        try #require(fixed.status == 0, "\(fixed.stderr)")
        let stored = EventsStream.waitFor([server], count: 3, timeout: 90)
        #expect(stored.count == 3, "\(bridge.stderr.suffix(2000))")
        #expect(Set(stored.map(\.msg_id)) == Set(bridge.events.compactMap { $0["id"] as? String }))
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit(timeout: 30) != nil)
    }
}
