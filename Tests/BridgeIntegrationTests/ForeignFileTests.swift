import BridgeTestSupport
import Foundation
import Testing

/// docs/RELIABILITY.md "Files another user controls", with the real binary: the bridge never writes through a file
/// or directory another local user controls. Each refusal is an exit 78 at start with one line naming the path and
/// the fix, and the file the trap pointed at is left as it was.
///
/// As root the other user's files are given to `nobody` (`OtherUser`); not as root the tests that need such a file
/// are disabled, and `OwnedPathTests` proves those refusals with a trusted uid that is not the test's.
@Suite(.serialized) struct ForeignFileTests {
    /// Nothing listens there: every refusal here comes before the bridge contacts Directus.
    private static let unreachable = "http://127.0.0.1:1"

    /// `webhookConfig` with an NDJSON sink at `output` and, with `webhook`, a webhook sink (whose outbox claims
    /// `state_dir` and opens `webhooks.db` as the sinks are made, before Directus is contacted).
    private func config(
        stateDir: String = "./state", output: String = "-", webhook: Bool = true, mode: String = "live"
    ) -> String {
        let ndjson = "  - type: ndjson\n    path: \"\(output)\"\n"
        let sinks = ndjson + (webhook ? webhookSink(Self.unreachable + "/hook") : "")
        return webhookConfig(url: Self.unreachable, sinks: sinks, mode: mode)
            .replacingOccurrences(of: "state_dir: ./state", with: "state_dir: \(stateDir)")
    }

    /// A file of this process's user that a trap points at: it must keep its content.
    private func victim(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("victim").path
        try "secret\n".write(toFile: path, atomically: false, encoding: .utf8)
        try OtherUser.setMode(path, 0o600)
        return path
    }

    /// Directory `name` in `directory`, with `mode` whatever the umask.
    private func subdirectory(_ name: String, of directory: URL, mode: mode_t) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        try OtherUser.setMode(path, mode)
        return path
    }

    private func content(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    /// Runs `run` with `yaml` in `directory` and returns its exit status and stderr.
    private func start(_ yaml: String, in directory: URL) throws -> (Int32?, String) {
        let bridge = try BridgeProcess.run(config: yaml, in: directory)
        let status = bridge.waitForExit(timeout: 20)
        if status == nil { bridge.send(SIGKILL) }
        return (status, bridge.stderr)
    }

    // MARK: - delivery.state_dir

    /// The reviewer's reproduction: another user's 0700 directory with `bridge.lock` linked to a file of root's.
    /// Before, root's bridge wrote its pid into that file.
    @Test(.enabled(if: OtherUser.isAvailable)) func aStateDirectoryOfAnotherUserIsRefused() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "foreign-state")
        let victim = try victim(in: directory)
        let theirs = try subdirectory("theirs", of: directory, mode: 0o700)
        try FileManager.default.createSymbolicLink(atPath: theirs + "/bridge.lock", withDestinationPath: victim)
        try OtherUser.give(theirs + "/bridge.lock")
        try OtherUser.give(theirs)
        let (status, stderr) = try start(config(stateDir: theirs), in: directory)
        #expect(status == 78, "\(stderr)")
        #expect(stderr.contains("delivery.state_dir: \(theirs) is owned by uid 65534"), "\(stderr)")
        #expect(content(victim) == "secret\n")

        // The commands that write state refuse it too.
        try config(stateDir: theirs, mode: "activity").write(
            to: directory.appendingPathComponent("activity.yaml"), atomically: true, encoding: .utf8)
        let resync = try BridgeProcess(
            arguments: ["resync", "articles", "--config", "activity.yaml"], directory: directory)
        #expect(resync.waitForExit() == 78, "\(resync.stderr)")
        #expect(resync.stderr.contains("owned by uid 65534"), "\(resync.stderr)")
        #expect(content(victim) == "secret\n")
    }

    /// A directory group or others may write: they could put a link in place of any file in it. Mode 1777 (as /tmp)
    /// too: the sticky bit keeps others from replacing the bridge's files, not from adding the ones still missing.
    @Test(arguments: [0o770, 0o757, 0o1777])
    func aStateDirectoryOthersMayWriteIsRefused(mode: Int) throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "loose-state")
        let victim = try victim(in: directory)
        let state = try subdirectory("state", of: directory, mode: mode_t(mode))
        try FileManager.default.createSymbolicLink(atPath: state + "/bridge.lock", withDestinationPath: victim)
        let (status, stderr) = try start(config(), in: directory)
        #expect(status == 78, "\(stderr)")
        #expect(stderr.contains("./state is writable by group or others"), "\(stderr)")
        #expect(content(victim) == "secret\n")
    }

    /// A symbolic link in place of a state file: another user's (as root), or this user's own — the bridge follows
    /// no link for its state files, as SQLite already refused to for `-wal` and `-shm` (without naming the cause).
    @Test(arguments: ["bridge.lock", "webhooks.db", "webhooks.db-wal", "webhooks.db-shm", "webhooks.db-journal"])
    func aLinkInPlaceOfAStateFileIsRefused(name: String) throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "linked-state")
        let victim = try victim(in: directory)
        let state = try subdirectory("state", of: directory, mode: 0o700)
        let link = state + "/" + name
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
        if OtherUser.isAvailable { try OtherUser.give(link) }
        let (status, stderr) = try start(config(), in: directory)
        #expect(status == 78, "\(stderr)")
        let expected = OtherUser.isAvailable ? "is a symbolic link owned by uid 65534" : "is a symbolic link"
        #expect(stderr.contains("./state/\(name) \(expected)"), "\(stderr)")
        #expect(content(victim) == "secret\n")
    }

    /// A regular file of another user in place of a state file, in the bridge's own directory (left from a time the
    /// directory was open, or restored by another user): refused by `run` and by `dlq replay`, and left as it was.
    @Test(.enabled(if: OtherUser.isAvailable), arguments: ["bridge.lock", "webhooks.db", "webhooks.db-wal"])
    func aFileOfAnotherUserInPlaceOfAStateFileIsRefused(name: String) throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "foreign-file")
        let state = try subdirectory("state", of: directory, mode: 0o700)
        let file = state + "/" + name
        #expect(FileManager.default.createFile(atPath: file, contents: nil))
        try OtherUser.give(file)
        let (status, stderr) = try start(config(), in: directory)
        #expect(status == 78, "\(stderr)")
        #expect(stderr.contains("./state/\(name) is owned by uid 65534"), "\(stderr)")
        #expect(content(file) == "")
        if name.hasPrefix("webhooks.db") {
            let (replay, _, replayError) = try dlq(["replay"], in: directory)
            #expect(replay == 78, "\(replayError)")
            #expect(replayError.contains("is owned by uid 65534"), "\(replayError)")
            #expect(content(file) == "")
        }
    }

    // MARK: - NDJSON output

    /// The reviewer's second reproduction: the output file pre-created, 0600, by another user in a directory all
    /// may write (with the sticky bit, as /tmp); before, root's bridge appended every event to it. And a link of
    /// theirs in its place, to a file of the bridge's user.
    @Test(.enabled(if: OtherUser.isAvailable), arguments: [false, true])
    func somethingAnotherUserPutWhereTheOutputGoesIsRefused(link: Bool) throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "foreign-output")
        let victim = try victim(in: directory)
        let shared = try subdirectory("shared", of: directory, mode: 0o1777)
        let output = shared + "/out.ndjson"
        if link {
            try FileManager.default.createSymbolicLink(atPath: output, withDestinationPath: victim)
        } else {
            #expect(FileManager.default.createFile(atPath: output, contents: nil))
            try OtherUser.setMode(output, 0o600)
        }
        try OtherUser.give(output)
        let (status, stderr) = try start(config(output: output, webhook: false), in: directory)
        #expect(status == 78, "\(stderr)")
        let problem = link ? "is a symbolic link owned by uid 65534" : "is owned by uid 65534"
        #expect(stderr.contains("\(output) \(problem)"), "\(stderr)")
        #expect(content(link ? victim : output) == (link ? "secret\n" : ""))
    }

    /// The output's directory belongs to another user, who could replace the file in it at any time.
    @Test(.enabled(if: OtherUser.isAvailable)) func anOutputDirectoryOfAnotherUserIsRefused() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "foreign-output-dir")
        let theirs = try subdirectory("theirs", of: directory, mode: 0o755)
        try OtherUser.give(theirs)
        let (status, stderr) = try start(config(output: theirs + "/out.ndjson", webhook: false), in: directory)
        #expect(status == 78, "\(stderr)")
        #expect(stderr.contains("\(theirs) is owned by uid 65534"), "\(stderr)")
        #expect(!FileManager.default.fileExists(atPath: theirs + "/out.ndjson"))
    }

    /// A directory others may write without the sticky bit: anyone could rename the output away and put their own.
    @Test func anOutputDirectoryOthersMayWriteWithoutTheStickyBitIsRefused() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "open-output-dir")
        let open = try subdirectory("open", of: directory, mode: 0o777)
        let (status, stderr) = try start(config(output: open + "/out.ndjson", webhook: false), in: directory)
        #expect(status == 78, "\(stderr)")
        #expect(stderr.contains("\(open) is writable by others without the sticky bit"), "\(stderr)")
        #expect(!FileManager.default.fileExists(atPath: open + "/out.ndjson"))
    }

    // MARK: - SIGHUP

    /// logrotate moved the output away and, before SIGHUP, another user put a file of theirs where the new one goes
    /// (as root; otherwise this user's link to a directory all may write without the sticky bit). The bridge refuses
    /// to reopen and writes nowhere meanwhile: not into their file, not on into the rotated one (which logrotate may
    /// compress or delete next). Once the path is free again it writes what waited at its cursor.
    @Test func aReopenThroughAPathAnotherUserControlsIsRefusedAndNothingIsLost() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "foreign-reopen")
        let shared = try subdirectory("shared", of: directory, mode: 0o1777)
        let output = shared + "/out.ndjson"
        let yaml = activityConfig(url: emulator.url, pollInterval: "1s", output: output)
        let bridge = try BridgeProcess.run(config: yaml, in: directory)
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        _ = try emulator.create("articles", ["title": "before the rotation"])
        #expect(bridge.waitUntil { _ in self.content(output)?.contains("before the rotation") == true })

        let rotated = shared + "/out.ndjson.1"
        #expect(rename(output, rotated) == 0)
        var trap = output
        if OtherUser.isAvailable {
            #expect(FileManager.default.createFile(atPath: output, contents: nil))
            try OtherUser.setMode(output, 0o600)
            try OtherUser.give(output)
        } else {
            let open = try subdirectory("open", of: directory, mode: 0o777)
            trap = open + "/out.ndjson"
            try FileManager.default.createSymbolicLink(atPath: output, withDestinationPath: trap)
        }
        bridge.send(SIGHUP)
        #expect(bridge.waitForLog("refusing to reopen"), "\(bridge.stderr)")
        _ = try emulator.create("articles", ["title": "while refused"])
        #expect(bridge.waitForLog("sink failed, retrying"), "\(bridge.stderr)")
        #expect((content(trap) ?? "").isEmpty)
        #expect(content(rotated)?.contains("while refused") == false)

        // The operator removes what is in the way: the sink makes its own file and writes what waited.
        #expect(unlink(output) == 0)
        #expect(bridge.waitUntil(timeout: 20) { _ in self.content(output)?.contains("while refused") == true })
        #expect(bridge.isRunning)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
