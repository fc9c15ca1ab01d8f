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

    /// `rm state/*` under a running bridge (docs/RELIABILITY.md, "Careless or hostile operators"). Was: the first
    /// bridge kept its lock on the deleted file, and a second `run` made a new `bridge.lock`, locked it and ran
    /// beside the first, each delivering every change. Now the first locks a new file at the path within a second or
    /// so, and the second is refused as before.
    @Test func aDeletedLockFileIsLockedAgainSoASecondBridgeIsStillRefused() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "state-lock")
        let first = try BridgeProcess.run(config: activityConfig(url: emulator.url, pollInterval: "1s"), in: directory)
        #expect(first.waitUntilConnected(), "the first bridge did not connect: \(first.stderr)")
        #expect(unlink(directory.appendingPathComponent("state/bridge.lock").path) == 0)
        #expect(
            first.waitForLog("bridge.lock was deleted or replaced", timeout: 20),
            "the first bridge did not lock a new file: \(first.stderr.suffix(2000))")

        let second = try BridgeProcess(arguments: ["run", "--config", "bridge.yaml"], directory: directory)
        let status = second.waitForExit(timeout: 20)
        if status == nil { second.send(SIGTERM) }
        #expect(status == 78, "the second bridge: exit \(String(describing: status)); \(second.stderr.suffix(2000))")
        #expect(second.stderr.contains("pid \(first.pid)"), "the message names the holder: \(second.stderr)")

        let key = try emulator.create("articles", ["title": "after the lock was deleted", "status": "published"])
        #expect(first.waitUntil(timeout: 20) { bridge in bridge.events.contains { $0["key"] as? String == key } })
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0)
    }

    /// The other order: the file at the path was locked by someone else before the running bridge looked again (a
    /// second bridge started right after the `rm`; here the test itself locks the new file, so that the order does
    /// not depend on the machine's speed). The first must stop, not run beside it: exit 78, naming the holder, as a
    /// second bridge's start is refused. Was: it ran on.
    @Test func aBridgeWhoseLockFileAnotherProcessLockedStopsWithTheConfigurationExitCode() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "state-lock")
        let first = try BridgeProcess.run(config: activityConfig(url: emulator.url, pollInterval: "1s"), in: directory)
        #expect(first.waitUntilConnected(), "the first bridge did not connect: \(first.stderr)")
        let path = directory.appendingPathComponent("state/bridge.lock").path
        #expect(unlink(path) == 0)
        let other = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(other >= 0, "cannot create \(path): \(errno)")
        defer { close(other) }
        try #require(flock(other, LOCK_EX | LOCK_NB) == 0)
        let pid = Array("\(getpid())\n".utf8)
        #expect(pid.withUnsafeBytes { write(other, $0.baseAddress, $0.count) } == pid.count)

        let status = first.waitForExit(timeout: 30)
        if status == nil { first.send(SIGKILL) }
        #expect(status == 78, "the first bridge: exit \(String(describing: status)); \(first.stderr.suffix(2000))")
        #expect(
            first.stderr.contains("in use by another directus-bridge (pid \(getpid()))"),
            "\(first.stderr.suffix(2000))")
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
