import BridgeTestSupport
import Foundation
import Testing

/// The commands beside shared-state bridges (`dlq`, `status`, `resync`) reach the bucket, not the state directory
/// of the machine they run on: each runs here in a directory of its own, with the bridges' config.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SharedStateCommandTests: SharedStateRig {
    /// Runs `directus-bridge <arguments> --config bridge.yaml` in a fresh directory holding `yaml`.
    func command(_ arguments: [String], yaml: String) throws -> (status: Int32?, stdout: [String], stderr: String) {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "shared-command")
        try yaml.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let process = try BridgeProcess(arguments: arguments + ["--config", "bridge.yaml"], directory: directory)
        let status = process.waitForExit(timeout: 30)
        return (status, process.lines, process.stderr)
    }

    /// The event ids `dlq list --json` prints.
    func listedIDs(_ yaml: String) -> [String] {
        guard let listed = try? command(["dlq", "list", "--json"], yaml: yaml), listed.status == 0 else { return [] }
        return listed.stdout.compactMap { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["id"] as? String
        }
    }

    /// A dead letter outlives the bridge that wrote it: bridge A dead-letters every event (the receiver answers
    /// 400), `dlq list` run elsewhere lists them from the bucket; A dies; `dlq replay` marks them, and bridge B,
    /// active now, delivers them with the same ids.
    @Test func deadLettersLiveInTheBucketAndTheNextActiveBridgeReplaysThem() throws {
        let server = try startedSingleServer("shared-dlq")
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(defaultStep: ["status": 400])
        let yaml = try sharedWebhookConfig(emulator, [server], receiver, maxAttempts: 3)
        let (active, standby) = try startPair(config: yaml)
        let expected = Set(try changes(emulator, count: 5))

        #expect(
            active.waitUntil(timeout: 30) { _ in Set(listedIDs(yaml)) == expected },
            "listed \(listedIDs(yaml)), expected \(expected.sorted()); \(active.stderr.suffix(3000))")
        #expect(!active.stderr.contains("kept in webhooks.db"))

        active.send(SIGKILL)
        #expect(active.waitForExit() != nil)
        #expect(standby.waitForLog("became active", timeout: 30), "\(standby.stderr.suffix(3000))")
        try receiver.script(defaultStep: ["status": 204])
        let replay = try command(["dlq", "replay"], yaml: yaml)
        #expect(replay.status == 0, "\(replay.stderr)")
        #expect(replay.stderr.contains("replayed 5 dead letters"), "\(replay.stderr)")
        #expect(
            standby.waitUntil(timeout: 30) { _ in Set((try? receiver.delivered().map(\.id)) ?? []) == expected },
            "\(standby.stderr.suffix(3000))")
        #expect(listedIDs(yaml).isEmpty)
        standby.send(SIGTERM)
        #expect(standby.waitForExit() == 0, "\(standby.stderr.suffix(2000))")
    }
}

extension SharedStateCommandTests {
    /// `status` beside shared-state bridges reports the cursors in the bucket and who holds the lease, not the
    /// (empty) state directory of the machine it runs on.
    @Test func statusReadsTheCursorsAndTheLeaseHolderFromTheBucket() throws {
        let server = try startedSingleServer("shared-status")
        let emulator = try Emulator()
        defer { emulator.stop() }
        let yaml = config(emulator, [server])
        let bridge = try BridgeProcess.run(config: yaml)
        try #require(bridge.waitForLog("became active", timeout: 30), "\(bridge.stderr.suffix(3000))")
        #expect(bridge.waitUntilConnected(timeout: 30))
        let expected = try changes(emulator, count: 5)
        #expect(bridge.waitUntil(timeout: 20) { Set(delivered($0)).isSuperset(of: expected) })
        let newest = try #require(expected.compactMap { Int64($0.dropFirst(4)) }.max())
        var report: [String] = []
        // The cursor is recorded once the sink has the batch: wait for the report to show it.
        #expect(
            bridge.waitUntil(timeout: 20) { _ in
                report = (try? command(["status"], yaml: yaml).stdout) ?? []
                return report.contains { line in
                    let cursor = line.split(separator: " ").last.flatMap { Int64($0) }
                    return line.hasPrefix("sink") && cursor.map { $0 >= newest } == true
                }
            }, "\(report)")
        #expect(report.contains { $0.hasPrefix("activity      lowest sink cursor") }, "\(report)")
        #expect(
            report.contains { $0.hasPrefix("shared state  bucket bridge_test, name orders: reachable; lease held by") },
            "\(report)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }
}

extension SharedStateCommandTests {
    /// `resync` beside shared-state bridges: the request goes into the bucket; the active bridge takes it within its
    /// term (the standby stays a standby) and snapshots the subscription again; with no bridge active, the next one
    /// to start does.
    @Test func resyncIsTakenByTheActiveBridgeOrTheNextOne() throws {
        let server = try startedSingleServer("shared-resync")
        let emulator = try Emulator()
        defer { emulator.stop() }
        let yaml = config(emulator, [server])
        let (active, standby) = try startPair(config: yaml)
        let expected = try changes(emulator, count: 3)
        #expect(active.waitUntil(timeout: 20) { Set(delivered($0)).isSuperset(of: expected) })
        func snapshots(_ bridge: BridgeProcess) -> Int {
            lines(bridge).count { $0.line.contains("\"origin\":\"snapshot\"") }
        }
        #expect(snapshots(active) == 0)

        let resync = try command(["resync", "articles"], yaml: yaml)
        #expect(resync.status == 0, "\(resync.stderr)")
        #expect(resync.stderr.contains("recorded in the shared state"), "\(resync.stderr)")
        // Contract, "Commands": within 10 seconds (stretched by the test patience on a loaded machine).
        #expect(active.waitUntil(timeout: 10) { snapshots($0) > 0 }, "\(active.stderr.suffix(3000))")
        #expect(active.stderr.contains("resync requested in the shared state: handed to the sinks' readers"))
        #expect(active.stderr.components(separatedBy: "reading the activity log").count == 2, "one term")
        #expect(delivered(standby).isEmpty && !standby.stderr.contains("became active"))
        let unknown = try command(["resync", "nope"], yaml: yaml)
        #expect(unknown.status == 64, "\(unknown.stderr)")

        // No bridge active: the next one to start takes the request.
        active.send(SIGTERM)
        #expect(active.waitForExit() == 0, "\(active.stderr.suffix(2000))")
        #expect(standby.waitForLog("became active", timeout: 10), "\(standby.stderr.suffix(3000))")
        standby.send(SIGTERM)
        #expect(standby.waitForExit() == 0, "\(standby.stderr.suffix(2000))")
        #expect(try command(["resync", "articles"], yaml: yaml).status == 0)
        let next = try BridgeProcess.run(config: yaml)
        #expect(next.waitUntil(timeout: 30) { snapshots($0) > 0 }, "\(next.stderr.suffix(3000))")
        #expect(next.stderr.contains("resync requested"))
        next.send(SIGTERM)
        #expect(next.waitForExit() == 0, "\(next.stderr.suffix(2000))")
    }
}
