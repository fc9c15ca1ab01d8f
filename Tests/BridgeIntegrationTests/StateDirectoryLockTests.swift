import BridgeTestSupport
import Foundation
import Testing

/// One bridge per `delivery.state_dir`: a second `run` started by mistake on the same directory (a copied unit, a
/// second replica on a shared volume) would read the same cursors and deliver every change a second time.
@Suite(.serialized) struct StateDirectoryLockTests {
    @Test func aSecondBridgeOnTheSameStateDirectoryRefusesToStart() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "state-lock")
        let first = try BridgeProcess.run(config: activityConfig(url: emulator.url, pollInterval: "1s"), in: directory)
        #expect(first.waitUntilConnected(), "the first bridge did not connect: \(first.stderr)")

        let second = try BridgeProcess(arguments: ["run", "--config", "bridge.yaml"], directory: directory)
        let status = second.waitForExit(timeout: 20)
        #expect(status == 78, "the second bridge: exit \(String(describing: status)); \(second.stderr)")
        #expect(second.stderr.contains("./state"), "the message names the directory: \(second.stderr)")
        #expect(second.stderr.contains("pid \(first.pid)"), "the message names the holder: \(second.stderr)")
        #expect(second.lines.isEmpty, "the second bridge delivered: \(second.lines)")

        // The first bridge still delivers; once it has stopped, the directory is free again.
        let key = try emulator.create("articles", ["title": "after the refused start", "status": "published"])
        #expect(first.waitUntil(timeout: 20) { bridge in bridge.events.contains { $0["key"] as? String == key } })
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0)
        let third = try BridgeProcess(arguments: ["run", "--config", "bridge.yaml"], directory: directory)
        #expect(third.waitUntilConnected(), "a bridge after the first stopped: \(third.stderr)")
        third.send(SIGTERM)
        #expect(third.waitForExit() == 0)
    }

    @Test func aKilledBridgeLeavesNoStaleLock() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "state-lock")
        let first = try BridgeProcess.run(config: activityConfig(url: emulator.url), in: directory)
        #expect(first.waitUntilConnected(), "the first bridge did not connect: \(first.stderr)")
        first.send(SIGKILL)
        _ = first.waitForExit()

        let second = try BridgeProcess(arguments: ["run", "--config", "bridge.yaml"], directory: directory)
        #expect(second.waitUntilConnected(), "after SIGKILL the directory stays claimed: \(second.stderr)")
        second.send(SIGTERM)
        #expect(second.waitForExit() == 0)
    }
}
