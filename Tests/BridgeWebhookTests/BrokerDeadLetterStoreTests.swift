import BridgeStore
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeEvents
@testable import BridgeSinks

/// A broker sink's dead letters in `webhooks.db` (`LocalBrokerDeadLetters`): listed, replayed and purged by the
/// same calls as a webhook's (`directus-bridge dlq`), handed back to the sink from the outbox, once per run.
@Suite struct BrokerDeadLetterStoreTests {
    func refused(_ n: Int, sink: String = "1-jetstream-abcd") -> DeadLetter {
        var event = webhookEvent(n)
        event.event = .delete
        return DeadLetter(
            refused: event, sink: sink, reason: "message size exceeds maximum", deadAt: 5_000, replay: nil)
    }

    @Test func refusedEventsAreListedReplayedToTheirSinkAndDeliveredOnce() throws {
        let store = try makeStore()
        let letters = LocalBrokerDeadLetters(store: store, sink: "1-jetstream-abcd")
        try letters.file([1, 2].map { RefusedLetter(letter: refused($0), replay: nil) })
        // Refused again after a restart before the cursor moved: one letter still.
        try letters.file([RefusedLetter(letter: refused(2), replay: nil)])
        // `dlq list` sees them with their reason and change.
        let listed = try store.deadLetters(matching: DeadLetterFilter())
        #expect(listed.map(\.eventID) == ["evt_1", "evt_2"])
        #expect(listed.allSatisfy { $0.reason == "message size exceeds maximum" && $0.event == .delete })
        #expect(listed.first?.sink == "1-jetstream-abcd" && listed.first?.body == webhookEvent(1).body.bytes)
        #expect(try letters.takeReplays(limit: 10).isEmpty, "nothing replayed yet")

        // `dlq replay --id evt_1`: back in the outbox under the sink's id; the sink takes it once per run.
        _ = try store.replay(matching: DeadLetterFilter(ids: ["evt_1"]), now: 9_000)
        let taken = try letters.takeReplays(limit: 10)
        #expect(taken.map(\.eventID) == ["evt_1"] && taken.first?.event == .delete)
        #expect(taken.first?.body == webhookEvent(1).body.bytes && taken.first?.replayedEvent.id == "evt_1")
        #expect(try letters.takeReplays(limit: 10).isEmpty, "taken already in this run")
        // A webhook sink never reads another sink's rows.
        #expect(try store.pending(sink: "0-example.com:443-12345678", after: 0, limit: 10).isEmpty)
        // A new run takes what the last one did not deliver.
        let nextRun = LocalBrokerDeadLetters(store: store, sink: "1-jetstream-abcd")
        let again = try nextRun.takeReplays(limit: 10)
        #expect(again.map(\.eventID) == ["evt_1"])
        try nextRun.delivered(again)
        #expect(try store.outboxCount(sink: "1-jetstream-abcd") == 0)
        #expect(try store.deadLetters(matching: DeadLetterFilter()).map(\.eventID) == ["evt_2"])
    }

    @Test func aFileOfTheFirstSchemaKeepsItsLettersAndTakesBrokerLettersAfterMigrating() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "outbox-v1").path
        do {
            let old = try SQLiteDatabase(path: directory + "/" + OutboxStore.fileName)
            _ = try old.migrate([OutboxStore.migrations[0]])
            try old.run(
                """
                INSERT INTO dead_letters (sink, event_id, collection, item_key, body, attempts, created_at, dead_at,
                    reason, last_status, response) VALUES ('0-hook', 'evt_old', 'articles', '1', x'7b7d', 12, 1, 2,
                    'HTTP 400 is not retried', 400, x'')
                """)
        }
        let store = try OutboxStore.open(stateDir: directory)
        let letters = LocalBrokerDeadLetters(store: store, sink: "1-kafka-abcd")
        try letters.file([RefusedLetter(letter: refused(5, sink: "1-kafka-abcd"), replay: nil)])
        let listed = try store.deadLetters(matching: DeadLetterFilter())
        #expect(listed.map(\.eventID) == ["evt_old", "evt_5"])
        #expect(listed.map(\.event) == [nil, .delete] && listed.first?.lastStatus == 400)
    }

    @Test func aReplayRefusedAgainLeavesTheOutboxForTheDeadLettersInOneStep() throws {
        let store = try makeStore()
        let letters = LocalBrokerDeadLetters(store: store, sink: "1-kafka-abcd")
        try letters.file([RefusedLetter(letter: refused(3, sink: "1-kafka-abcd"), replay: nil)])
        _ = try store.replay(matching: DeadLetterFilter(), now: 9_000)
        let replay = try #require(try letters.takeReplays(limit: 10).first)
        let again = DeadLetter(
            refused: replay.replayedEvent, sink: "1-kafka-abcd", reason: "still too large", deadAt: 10_000,
            replay: replay)
        try letters.file([RefusedLetter(letter: again, replay: replay)])
        #expect(try store.outboxCount(sink: "1-kafka-abcd") == 0)
        let listed = try store.deadLetters(matching: DeadLetterFilter())
        #expect(listed.map(\.eventID) == ["evt_3"] && listed.first?.reason == "still too large")
        #expect(listed.first?.event == .delete && listed.first?.createdAt == 9_000)
        // `dlq purge` removes it for good.
        #expect(try store.purge(matching: DeadLetterFilter()).count == 1)
        #expect(try store.deadLetterCount(sink: nil) == 0)
    }
}

/// `webhooks.db` deleted or renamed while the bridge runs (an operator cleaning up, a script gone wrong): SQLite
/// goes on committing into the unlinked file, which is gone at exit. What it holds is copied into a new file at the
/// path (`OutboxStore.keepAtPath`, docs/RELIABILITY.md "Careless or hostile operators").
@Suite struct OutboxFileGoneTests {
    func letter(_ n: Int) -> RefusedLetter {
        RefusedLetter(
            letter: DeadLetter(
                refused: webhookEvent(n), sink: "1-kafka-abcd", reason: "too large", deadAt: 1, replay: nil),
            replay: nil)
    }

    /// Deletes (or renames) `webhooks.db` and its `-wal` and `-shm` under the open `store`.
    func remove(_ store: OutboxStore, renamed: Bool) {
        for suffix in ["", "-wal", "-shm"] {
            if renamed { rename(store.path + suffix, store.path + suffix + ".old") } else { unlink(store.path + suffix) }
        }
    }

    /// Was (first session): filed and logged as stored, the cursor moved past the event, and the letter was gone at
    /// exit; then (the session after) an error at every sync until a restart, which found an empty outbox. Now the
    /// file is copied to its path at the sync that makes the letter durable: every letter is there.
    @Test(arguments: [false, true]) func aLetterFiledIntoAFileNoLongerThereIsInANewFileAtThePath(renamed: Bool) throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "outbox-gone").path
        let store = try OutboxStore.open(stateDir: directory)
        let letters = LocalBrokerDeadLetters(store: store, sink: "1-kafka-abcd")
        try letters.file([letter(1)])
        remove(store, renamed: renamed)
        try letters.file([letter(2)])
        try letters.file([letter(3)])
        try store.close()
        let reopened = try OutboxStore(path: store.path)
        #expect(try reopened.deadLetters(matching: DeadLetterFilter()).map(\.eventID) == ["evt_1", "evt_2", "evt_3"])
        let attributes = try FileManager.default.attributesOfItem(atPath: store.path)
        #expect((attributes[.posixPermissions] as? Int ?? -1) & 0o777 == 0o600)
    }

    /// A webhook whose receiver is down writes nothing new: its undelivered rows must reach a file at the path
    /// without another write — at the periodic check (`keepAtPath`) or at the latest when the run closes the file.
    /// Was: the next start found no file, and the rows were never delivered.
    @Test func undeliveredRowsOfADeletedFileAreCopiedWithoutAnotherWrite() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "outbox-gone").path
        let store = try OutboxStore.open(stateDir: directory)
        #expect(try store.insert((1...3).map { webhookEvent($0) }, sink: "0-webhook-a", now: 1, limit: 100).inserted == 3)
        remove(store, renamed: false)
        try store.keepAtPath()
        #expect(FileManager.default.fileExists(atPath: store.path), "no file at the path after the periodic check")
        #expect(try OutboxStore(path: store.path).outboxCount(sink: "0-webhook-a") == 3)
        remove(store, renamed: true)
        try store.close()
        #expect(try OutboxStore(path: store.path).outboxCount(sink: "0-webhook-a") == 3, "nothing at the path after close")
    }

    /// `rm state/webhooks.db-wal` alone (taken for a leftover): SQLite went on committing into the unlinked log, the
    /// sync found no log at the path and synced nothing, and a crash then lost every letter called stored since —
    /// the file alone held none. Now the sync that makes a letter durable first writes the log into the file.
    @Test func aLetterFiledAfterTheLogAloneWasDeletedIsInTheFileItself() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "outbox-log-gone").path
        let store = try OutboxStore.open(stateDir: directory)
        let letters = LocalBrokerDeadLetters(store: store, sink: "1-kafka-abcd")
        try letters.file([letter(1)])
        #expect(unlink(store.path + "-wal") == 0)
        try letters.file([letter(2)])
        // What a crash now leaves at the path: the file, without the log the process held.
        let alone = directory + "/alone.db"
        try FileManager.default.copyItem(atPath: store.path, toPath: alone)
        #expect(try OutboxStore(path: alone).deadLetters(matching: DeadLetterFilter()).map(\.eventID) == ["evt_1", "evt_2"])
        #expect(FileManager.default.fileExists(atPath: store.path + "-wal"), "a new log at the path")
        try store.close()
    }
}

/// What a broker sink asks of `webhooks.db` over and over goes through an index: an oversized import makes thousands
/// of letters, and a webhook whose receiver is down leaves a backlog of any size beside them.
@Suite struct BrokerDeadLetterQueryPlanTests {
    /// The plan SQLite picks for `sql`, one detail line per step.
    func plan(of sql: String, in store: OutboxStore) throws -> [String] {
        try store.withState { state in
            try state.database.query("EXPLAIN QUERY PLAN " + sql) { $0.string(at: 3) }
        }
    }

    @Test func filingALetterFindsTheOneItReplacesByIndex() throws {
        // Was "SCAN dead_letters": a scan of every letter (and its overflow pages) per letter filed.
        let steps = try plan(of: OutboxStore.replacedLetterSQL, in: try makeStore())
        #expect(steps.count == 1 && steps.allSatisfy { $0.hasPrefix("SEARCH dead_letters USING") }, "\(steps)")
    }

    @Test func thePollForReplayedLettersReadsOnlyTheSinksRows() throws {
        // Was "SEARCH outbox USING INTEGER PRIMARY KEY (rowid>?)": every row of every sink after the last replay
        // taken in this run, each second.
        let steps = try plan(of: OutboxStore.replayedLettersSQL, in: try makeStore())
        #expect(steps.contains { $0.hasPrefix("SEARCH outbox USING INDEX outbox_sink_event (sink=?") }, "\(steps)")
    }
}
