import BridgeTestSupport
import Foundation
import Testing

/// `webhooks.db` as a careless operator leaves it — read-only, damaged — stops `run` and the writing `dlq` commands
/// at start with one line naming it (exit 78, as an unwritable `state_dir` does), and is never changed; and `dlq` by
/// sink (docs/configuration.md, "Dead letters").
@Suite(.serialized) struct StateFileTests {
    /// A bridge run once with `sinks`, stopped: `state/webhooks.db` exists. Returns its directory.
    func preparedDirectory(emulator: Emulator, sinks: String) throws -> URL {
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url, sinks: sinks))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        // What the tests below damage is the file alone: a log left beside it would hold every page of the run.
        let log = bridge.directory.appendingPathComponent("state/webhooks.db-wal").path
        #expect(!FileManager.default.fileExists(atPath: log), "the clean exit closed webhooks.db")
        return bridge.directory
    }

    /// Runs `body` with the directory of a bridge that ran once with a webhook sink, while its Directus emulator and
    /// receiver are up (a bridge started again there finds them).
    func withPreparedWebhookDirectory(_ body: (URL) throws -> Void) throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try body(try preparedDirectory(emulator: emulator, sinks: webhookSink(receiver.hookURL())))
    }

    func startAgain(in directory: URL) throws -> BridgeProcess {
        try BridgeProcess(arguments: ["run", "--config", "bridge.yaml"], directory: directory)
    }

    @Test(.enabled(if: UnwritablePath.isSupported))
    func aReadOnlyWebhooksDBStopsRunAndTheWritingDLQCommandsButNotList() throws {
        try withPreparedWebhookDirectory { directory in
            let file = directory.appendingPathComponent("state/webhooks.db").path
            let unwritable = try UnwritablePath(file)
            defer { unwritable.restore() }

            let bridge = try startAgain(in: directory)
            let status = bridge.waitForExit(timeout: 30)
            #expect(status == 78, "exit \(String(describing: status)): \(bridge.stderr)")
            let refusal = bridge.stderr.split(separator: "\n").filter { $0.contains("webhooks.db is read-only") }
            #expect(refusal.count == 1, "one line names the file: \(bridge.stderr)")
            #expect(refusal.first?.contains("writable by the user the bridge runs as") == true)

            for action in ["replay", "purge"] {
                let (code, lines, errors) = try dlq([action], in: directory)
                #expect(code == 78, "dlq \(action): exit \(String(describing: code)): \(errors)")
                #expect(errors.contains("webhooks.db is read-only"), "\(errors)")
                #expect(lines.isEmpty)
            }
            let (listStatus, _, listErrors) = try dlq(["list"], in: directory)
            #expect(listStatus == 0, "dlq list reads a read-only file: \(listErrors)")
            #expect(listErrors.contains("0 dead letters"))
            let statusCommand = try BridgeProcess(
                arguments: ["status", "--config", "bridge.yaml"],
                directory: directory
            )
            #expect(statusCommand.waitForExit() == 0, "status reads a read-only file: \(statusCommand.stderr)")
        }
    }

    /// A read-only `state_dir` whose `webhooks.db` is writable: SQLite cannot create the `-wal`/`-shm` files beside it.
    @Test(.enabled(if: UnwritablePath.isSupported))
    func aReadOnlyStateDirectoryIsNamedByRunAndByDLQ() throws {
        try withPreparedWebhookDirectory { directory in
            let unwritable = try UnwritablePath(directory.appendingPathComponent("state").path)
            defer { unwritable.restore() }

            let bridge = try startAgain(in: directory)
            let status = bridge.waitForExit(timeout: 30)
            #expect(status == 78, "exit \(String(describing: status)): \(bridge.stderr)")
            #expect(bridge.stderr.contains("webhooks.db-wal and -shm in ./state"), "\(bridge.stderr)")
            for action in ["list", "purge"] {
                let (code, _, errors) = try dlq([action], in: directory)
                #expect(code == 78, "dlq \(action): \(errors)")
                #expect(errors.contains("the directory must be writable"), "dlq \(action): \(errors)")
            }
        }
    }

    /// The sibling: activity mode's `cursor.db` is opened the same way.
    @Test(.enabled(if: UnwritablePath.isSupported))
    func aReadOnlyCursorDBStopsRunAtStart() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let first = try BridgeProcess.run(config: activityConfig(url: emulator.url, pollInterval: "1s"))
        #expect(first.waitUntilConnected(), "\(first.stderr)")
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0)
        let unwritable = try UnwritablePath(first.directory.appendingPathComponent("state/cursor.db").path)
        defer { unwritable.restore() }

        let bridge = try startAgain(in: first.directory)
        let status = bridge.waitForExit(timeout: 30)
        #expect(status == 78, "exit \(String(describing: status)): \(bridge.stderr)")
        #expect(bridge.stderr.contains("cursor.db is read-only"), "\(bridge.stderr)")
        let resync = try BridgeProcess(
            arguments: ["resync", "articles", "--config", "bridge.yaml"],
            directory: first.directory
        )
        #expect(resync.waitForExit() == 78, "\(resync.stderr)")
        #expect(resync.stderr.contains("cursor.db is read-only"), "\(resync.stderr)")
    }

    /// A clean exit closes the bridge's databases (`cursor.db`, `webhooks.db`): each log is checkpointed into its file
    /// and removed, whichever thread still holds the database when the process exits. Once in CI a bridge exited 0
    /// with `webhooks.db`'s whole run still in its log, and the next start read the damaged file's page 1 from there.
    @Test func aCleanExitLeavesNoWriteAheadLog() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        let config = webhookConfig(url: emulator.url, sinks: webhookSink(receiver.hookURL()), mode: "activity")
        var directory: URL?
        for run in 1...3 {
            let bridge = try BridgeProcess.run(config: config, in: directory)
            directory = bridge.directory
            #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
            bridge.send(SIGTERM)
            #expect(bridge.waitForExit() == 0, "\(bridge.stderr)")
            for file in ["cursor.db", "webhooks.db"] {
                let path = bridge.directory.appendingPathComponent("state/\(file)").path
                #expect(FileManager.default.fileExists(atPath: path), "run \(run): \(file)")
                #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "run \(run): \(file)-wal left")
            }
        }
    }

    @Test func aDamagedWebhooksDBStopsRunAndIsLeftAsItWas() throws {
        try withPreparedWebhookDirectory { directory in
            let url = directory.appendingPathComponent("state/webhooks.db")
            var bytes = try Data(contentsOf: url)
            bytes.replaceSubrange(
                0..<min(4096, bytes.count),
                with: Data(repeating: 0x41, count: min(4096, bytes.count))
            )
            try bytes.write(to: url)

            let bridge = try startAgain(in: directory)
            let status = bridge.waitForExit(timeout: 30)
            #expect(status == 78, "exit \(String(describing: status)): \(bridge.stderr)")
            #expect(
                bridge.stderr.contains("webhooks.db is damaged or not an SQLite database"),
                "\(bridge.stderr)"
            )
            #expect(try Data(contentsOf: url) == bytes, "the operator's file is not changed")
            let (listStatus, _, listErrors) = try dlq(["list"], in: directory)
            #expect(listStatus == 78, "\(listErrors)")
            #expect(listErrors.contains("damaged or not an SQLite database"))
            #expect(try Data(contentsOf: url) == bytes)
        }
    }

    /// Two webhook sinks dead-letter the same change: `dlq list` tells the letters apart by sink, `--sink` picks
    /// them (by id or position); letters replayed for a sink since removed from bridge.yaml are dropped by
    /// `dlq purge --sink` of it, and only then.
    @Test func dlqBySinkAndPurgeOfAnUnconfiguredSinksOutbox() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(defaultStep: ["status": 410])
        let first = webhookSink(receiver.hookURL("/first"))
        let second = webhookSink(receiver.hookURL("/second"))
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url, sinks: first + second))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.create("articles", ["title": "refused twice"])
        #expect(
            bridge.waitUntil(timeout: 30) { _ in ((try? dlq(["list"], in: bridge.directory).1.count) ?? 0) == 2 },
            "\(bridge.stderr)"
        )
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        let directory = bridge.directory

        let json = try dlq(["list", "--json"], in: directory).1.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
        let sinks = json.compactMap { $0["sink"] as? String }
        #expect(sinks.count == 2 && Set(sinks).count == 2, "\(json)")
        let secondID = try #require(sinks.first { $0.hasPrefix("1-") })
        let table = try dlq(["list"], in: directory).1
        #expect(table.filter { $0.contains(" \(secondID) ") }.count == 1, "the SINK column: \(table)")
        #expect(try dlq(["list", "--sink", secondID], in: directory).1.count == 1)
        #expect(
            try dlq(["list", "--sink", "1"], in: directory).1 == dlq(["list", "--sink", secondID], in: directory).1
        )
        #expect(try dlq(["list", "--sink", "0", "--sink", "1"], in: directory).1.count == 2)
        #expect(try dlq(["list", "--sink", "9-gone:1-00000000"], in: directory).1.isEmpty)

        // The second sink's letter goes back to its outbox; then the sink leaves bridge.yaml.
        let (replayStatus, replayed, _) = try dlq(["replay", "--sink", secondID], in: directory)
        #expect(replayStatus == 0 && replayed.count == 1)
        try webhookConfig(url: emulator.url, sinks: first)
            .write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let restarted = try startAgain(in: directory)
        #expect(restarted.waitUntilConnected(), "\(restarted.stderr)")
        #expect(
            restarted.waitForLog("dlq purge --sink \(secondID)"),
            "the start-up warning says how: \(restarted.stderr)"
        )

        // A purge without --sink leaves the waiting row alone; --dry-run counts it; --sink drops it.
        let (_, _, plain) = try dlq(["purge", "--dry-run"], in: directory)
        #expect(!plain.contains("outbox"), "\(plain)")
        let (dryStatus, _, dry) = try dlq(["purge", "--dry-run", "--sink", secondID], in: directory)
        #expect(dryStatus == 0 && dry.contains("would drop 1 event waiting in the outbox"), "\(dry)")
        let (purgeStatus, _, purged) = try dlq(["purge", "--sink", secondID], in: directory)
        #expect(purgeStatus == 0 && purged.contains("dropped 1 event waiting in the outbox"), "\(purged)")
        #expect(try dlq(["purge", "--dry-run", "--sink", secondID], in: directory).2.contains("would drop 0 events"))
        // The configured sink's letter is untouched, and a configured sink's outbox is never dropped.
        #expect(try dlq(["list"], in: directory).1.count == 1)
        #expect(try !dlq(["purge", "--dry-run", "--sink", "0"], in: directory).2.contains("outbox"))
        restarted.send(SIGTERM)
        #expect(restarted.waitForExit() == 0)
    }
}
