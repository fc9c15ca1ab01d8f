import BridgeTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Issue 23, item 11: a core file of the bridge would hold its tokens. The running binary makes itself non-dumpable
/// (`PR_SET_DUMPABLE` 0: no core, and its /proc files become root's, closed to other processes of its user) and sets
/// its core size limit to 0, whatever the unit says.
@Suite(.serialized) struct CoreDumpTests {
    @Test func theRunningBridgeIsNotDumpableAndWritesNoCore() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "core-dump")
        // As root, the bridge runs as another user: a root process's /proc files are root's either way.
        let user: uid_t? = OtherUser.isAvailable ? OtherUser.uid : nil
        let state = directory.appendingPathComponent("state").path
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        try OtherUser.setMode(state, 0o700)
        if user != nil {
            try OtherUser.give(state)
            try OtherUser.setMode(directory.path, 0o755)
        }
        let config = liveConfig(
            url: "http://127.0.0.1:\(try freeLoopbackPort())", auth: "    token: core-dump-secret-token",
            subscriptions: "  - collection: articles")
        try config.write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        try OtherUser.setMode(directory.appendingPathComponent("bridge.yaml").path, 0o644)
        let bridge = try BridgeProcess(
            arguments: ["run", "--config", "bridge.yaml"], directory: directory, user: user)
        // Running: it retries the Directus that is not there.
        #expect(bridge.waitForLog("connect"), "\(bridge.stderr)")
        let runner = user ?? geteuid()
        var status = stat()
        #expect(stat("/proc/\(bridge.pid)/status", &status) == 0)
        #expect(status.st_uid == 0, "the bridge (uid \(runner)) is dumpable: its /proc files are uid \(status.st_uid)")
        let limits = try String(contentsOfFile: "/proc/\(bridge.pid)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map(String.init) ?? ""
        #expect(core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"],
            "\(core)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr)")
    }
}
