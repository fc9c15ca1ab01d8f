import BridgeStore
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeActivity
@testable import BridgeCore
@testable import BridgeDirectus
@testable import BridgeEvents
@testable import BridgeSinks

/// An event of `collection`/`key` with id `evt_<n>` and a body naming both.
func webhookEvent(_ n: Int, key: String? = nil, collection: String = "articles") -> EncodedEvent {
    let itemKey = key ?? "\(n)"
    return EncodedEvent(
        id: "evt_\(n)",
        event: .update,
        collection: collection,
        key: itemKey,
        origin: .live,
        seq: nil,
        time: Timestamp(microsecondsSinceEpoch: 0),
        receivedAt: Timestamp(microsecondsSinceEpoch: 0),
        subscription: collection,
        body: Array(#"{"id":"evt_\#(n)","collection":"\#(collection)","key":"\#(itemKey)"}"#.utf8)
    )
}

/// A fresh store in a new temporary directory.
func makeStore() throws -> OutboxStore {
    try OutboxStore.open(stateDir: try TestEnvironment.makeTemporaryDirectory(prefix: "outbox").path + "/state")
}

@Suite struct OutboxStoreTests {
    @Test func insertKeepsIdAndBodyIgnoresRepeatsAndTracksDepth() throws {
        let store = try makeStore()
        #expect(try store.insert([webhookEvent(1), webhookEvent(2)], sink: "a", now: 1000, limit: 10).inserted == 2)
        // The dispatcher may offer a batch again after a failure: the same id is not queued twice.
        #expect(try store.insert([webhookEvent(2), webhookEvent(3)], sink: "a", now: 1001, limit: 10).inserted == 1)
        #expect(try store.insert([webhookEvent(2)], sink: "b", now: 1001, limit: 10).inserted == 1)
        #expect(try store.depth(sink: "a") == 3)
        #expect(try store.outboxCount(sink: "a") == 3)
        let pending = try store.pending(sink: "a", after: 0, limit: 100)
        #expect(pending.map(\.key) == ["1", "2", "3"])
        #expect(pending.map(\.attempts) == [0, 0, 0])
        #expect(pending.map(\.nextAttemptAt) == [1000, 1000, 1001])
        #expect(try store.pending(sink: "a", after: pending[1].seq, limit: 100).map(\.key) == ["3"])
        #expect(try store.pending(sink: "a", after: 0, limit: 2).count == 2)
        let payloads = try store.payloads([pending[2].seq, 999, pending[0].seq])
        #expect(payloads.map(\.eventID) == ["evt_3", "evt_1"])
        #expect(payloads[0].body == webhookEvent(3).body.bytes)
    }

    @Test func aFullOutboxRefusesNewEvents() throws {
        let store = try makeStore()
        _ = try store.insert((1...3).map { webhookEvent($0) }, sink: "a", now: 0, limit: 3)
        #expect(throws: OutboxFull.self) { try store.insert([webhookEvent(4)], sink: "a", now: 0, limit: 3) }
        #expect(try store.insert([webhookEvent(4)], sink: "other", now: 0, limit: 3).inserted == 1)
        let first = try #require(try store.pending(sink: "a", after: 0, limit: 1).first)
        try store.apply([.delivered(seq: first.seq)], sink: "a")
        #expect(try store.depth(sink: "a") == 2)
        #expect(try store.insert([webhookEvent(4)], sink: "a", now: 0, limit: 3).inserted == 1)
    }

    /// `max_outbox` bounds the outbox, not the number of batches: a batch larger than the room left is taken up to
    /// the limit and the rest left to the caller (before, any batch offered below the limit was taken whole, and a
    /// live-mode bridge with `max_outbox: 50` held 89 events after one merged batch).
    @Test func aBatchLargerThanTheRoomLeftIsTakenUpToTheLimit() throws {
        let store = try makeStore()
        _ = try store.insert((1...2).map { webhookEvent($0) }, sink: "a", now: 0, limit: 3)
        let insertion = try store.insert((3...7).map { webhookEvent($0) }, sink: "a", now: 0, limit: 3)
        #expect(insertion.inserted == 1 && insertion.taken == 1)
        #expect(try store.depth(sink: "a") == 3)
        #expect(try store.pending(sink: "a", after: 0, limit: 10).map(\.key) == ["1", "2", "3"])
    }

    @Test func outcomesDeleteRescheduleOrDeadLetter() throws {
        let store = try makeStore()
        _ = try store.insert((1...3).map { webhookEvent($0) }, sink: "a", now: 500, limit: 10)
        let rows = try store.pending(sink: "a", after: 0, limit: 10)
        try store.apply(
            [
                .delivered(seq: rows[0].seq),
                .retry(seq: rows[1].seq, attempts: 2, nextAttemptAt: 9000, lastStatus: 503, lastError: nil),
                .deadLetter(
                    seq: rows[2].seq,
                    attempts: 1,
                    deadAt: 7000,
                    reason: "HTTP 400 is not retried",
                    lastStatus: 400,
                    response: Array("nope".utf8)
                ),
            ],
            sink: "a"
        )
        let left = try store.pending(sink: "a", after: 0, limit: 10)
        #expect(left.map(\.key) == ["2"])
        #expect(left[0].attempts == 2 && left[0].nextAttemptAt == 9000)
        #expect(try store.depth(sink: "a") == 1)
        let letters = try store.deadLetters(matching: DeadLetterFilter())
        #expect(letters.count == 1)
        let letter = try #require(letters.first)
        #expect(letter.eventID == "evt_3" && letter.sink == "a" && letter.collection == "articles" && letter.key == "3")
        #expect(letter.body == webhookEvent(3).body.bytes)
        #expect(letter.attempts == 1 && letter.lastStatus == 400 && letter.deadAt == 7000 && letter.createdAt == 500)
        #expect(letter.response == Array("nope".utf8) && letter.reason == "HTTP 400 is not retried")
        #expect(try store.deadLetterCount(sink: "a") == 1 && store.deadLetterCount(sink: "b") == 0)
        // Applying the same outcomes again (a retried transaction) changes nothing more.
        try store.apply(
            [.deadLetter(seq: rows[2].seq, attempts: 1, deadAt: 7000, reason: "x", lastStatus: 400, response: [])],
            sink: "a"
        )
        #expect(try store.deadLetterCount(sink: nil) == 1)
    }

    /// Removals are deleted in runs, several rows per statement: a run longer than one statement, a short one, a row
    /// named twice and one already gone are each counted once, and a retry or dead letter between removals still
    /// finds its row.
    @Test func runsOfRemovalsAreDeletedAroundTheOtherOutcomes() throws {
        let store = try makeStore()
        let count = OutboxStore.deleteChunk * 2 + 5
        _ = try store.insert((1...count).map { webhookEvent($0) }, sink: "a", now: 0, limit: count)
        let rows = try store.pending(sink: "a", after: 0, limit: count).map(\.seq)
        let retried = rows[OutboxStore.deleteChunk + 3]
        let lettered = rows[count - 2]
        var writes: [OutboxWrite] = rows[..<(OutboxStore.deleteChunk + 3)].map { .delivered(seq: $0) }
        writes.append(.retry(seq: retried, attempts: 1, nextAttemptAt: 5000, lastStatus: 503, lastError: nil))
        writes += rows[(OutboxStore.deleteChunk + 4)..<(count - 2)].map { .removed(seq: $0) }
        writes.append(.delivered(seq: rows[0]))  // gone already: not counted again
        writes.append(
            .deadLetter(seq: lettered, attempts: 1, deadAt: 6000, reason: "HTTP 400", lastStatus: 400, response: [])
        )
        writes.append(.delivered(seq: rows[count - 1]))
        try store.apply(writes, sink: "a")
        let left = try store.pending(sink: "a", after: 0, limit: count)
        #expect(left.map(\.seq) == [retried])
        #expect(left.first?.attempts == 1 && left.first?.nextAttemptAt == 5000)
        #expect(try store.depth(sink: "a") == 1 && store.outboxCount(sink: "a") == 1)
        #expect(try store.deadLetters(matching: DeadLetterFilter()).map(\.key) == ["\(count - 1)"])
    }

    @Test func filtersReplayAndPurge() throws {
        let store = try makeStore()
        _ = try store.insert(
            [webhookEvent(1), webhookEvent(2, collection: "tags"), webhookEvent(3), webhookEvent(4)],
            sink: "a",
            now: 100,
            limit: 10
        )
        let rows = try store.pending(sink: "a", after: 0, limit: 10)
        try store.apply(
            rows.enumerated().map { index, row in
                .deadLetter(
                    seq: row.seq,
                    attempts: 3,
                    deadAt: Int64(1000 * (index + 1)),
                    reason: "r",
                    lastStatus: nil,
                    response: []
                )
            },
            sink: "a"
        )
        #expect(try store.deadLetters(matching: DeadLetterFilter(collection: "tags")).map(\.eventID) == ["evt_2"])
        #expect(try store.deadLetters(matching: DeadLetterFilter(since: 3000)).map(\.eventID) == ["evt_3", "evt_4"])
        #expect(
            try store.deadLetters(matching: DeadLetterFilter(collection: "articles", ids: ["evt_1", "evt_4", "evt_2"]))
                .map(\.eventID) == ["evt_1", "evt_4"]
        )

        // Replay from a second connection, as `directus-bridge dlq replay` does beside a running bridge.
        let dlq = try OutboxStore(path: store.path)
        let replayed = try dlq.replay(matching: DeadLetterFilter(ids: ["evt_1", "evt_3"]), now: 5000)
        #expect(replayed.map(\.eventID) == ["evt_1", "evt_3"])
        #expect(try store.recountDepth(sink: "a") == 2)
        let back = try store.pending(sink: "a", after: rows.last!.seq, limit: 10)
        #expect(back.map(\.key) == ["1", "3"])
        #expect(back.allSatisfy { $0.attempts == 0 && $0.nextAttemptAt == 5000 })
        #expect(
            try store.payloads(back.map(\.seq)).map(\.body) == [webhookEvent(1).body.bytes, webhookEvent(3).body.bytes]
        )
        #expect(try store.deadLetters(matching: DeadLetterFilter()).map(\.eventID) == ["evt_2", "evt_4"])

        #expect(try dlq.purge(matching: DeadLetterFilter(collection: "tags")).map(\.eventID) == ["evt_2"])
        #expect(try store.deadLetters(matching: DeadLetterFilter()).map(\.eventID) == ["evt_4"])
    }

    /// `dlq --sink`: letters of several sinks share the table; the filter picks them by sink, in SQL and in the
    /// shared bucket's filter alike.
    @Test func lettersAreFilteredBySink() throws {
        let store = try makeStore()
        for sink in ["a", "b", "c"] {
            _ = try store.insert([webhookEvent(1), webhookEvent(2)], sink: sink, now: 100, limit: 10)
            let rows = try store.pending(sink: sink, after: 0, limit: 10)
            try store.apply(
                rows.map {
                    .deadLetter(seq: $0.seq, attempts: 1, deadAt: 1000, reason: "r", lastStatus: nil, response: [])
                },
                sink: sink
            )
        }
        let all = try store.deadLetters(matching: DeadLetterFilter())
        #expect(all.count == 6)
        let picked = DeadLetterFilter(ids: ["evt_2"], sinks: ["c", "a"])
        #expect(try store.deadLetters(matching: picked).map(\.sink) == ["a", "c"])
        #expect(all.filter(picked.matches).map(\.sink) == ["a", "c"])
        #expect(try store.deadLetters(matching: DeadLetterFilter(sinks: ["gone"])).isEmpty)
        #expect(try store.purge(matching: DeadLetterFilter(sinks: ["b"])).count == 2)
        #expect(try store.deadLetterCount(sink: "b") == 0 && store.deadLetterCount(sink: "a") == 2)
        let replayed = try store.replay(matching: DeadLetterFilter(sinks: ["c"]), now: 2000)
        #expect(replayed.map(\.eventID) == ["evt_1", "evt_2"])
        #expect(try store.outboxCount(sink: "c") == 2 && store.outboxCount(sink: "a") == 0)
    }

    /// `dlq purge --sink` of a sink no longer configured: its replayed letters wait in the outbox, which only these
    /// calls reach; other sinks' rows stay.
    @Test func theOutboxOfNamedSinksIsDropped() throws {
        let store = try makeStore()
        _ = try store.insert([webhookEvent(1), webhookEvent(2)], sink: "gone", now: 100, limit: 10)
        _ = try store.insert([webhookEvent(3)], sink: "kept", now: 100, limit: 10)
        #expect(try store.depth(sink: "gone") == 2)
        #expect(try store.outboxCount(sinks: ["gone", "kept"]) == 3)
        #expect(try store.dropOutbox(sinks: ["gone", "absent"]) == 2)
        #expect(try store.outboxCountsBySink() == ["kept": 1])
        #expect(try store.depth(sink: "gone") == 0)
        #expect(try store.dropOutbox(sinks: ["gone"]) == 0)
    }

    /// A name added to a sink that had none (docs/configuration.md, "Sink names"): its outbox rows and dead letters
    /// move from its positional id to the name — also when the entry moved in the same edit — a name that already
    /// has rows keeps them, and a positional id without rows moves nothing.
    @Test func aNamedSinkKeepsTheRowsOfItsPositionalId() throws {
        let store = try makeStore()
        _ = try store.insert(
            [webhookEvent(1), webhookEvent(2), webhookEvent(3)],
            sink: "1-h:80-b",
            now: 100,
            limit: 10
        )
        let first = try store.pending(sink: "1-h:80-b", after: 0, limit: 1)
        try store.apply(
            first.map {
                .deadLetter(seq: $0.seq, attempts: 1, deadAt: 1000, reason: "r", lastStatus: nil, response: [])
            },
            sink: "1-h:80-b"
        )
        _ = try store.insert([webhookEvent(4)], sink: "2-h:80-c", now: 100, limit: 10)
        _ = try store.insert([webhookEvent(5)], sink: "taken", now: 100, limit: 10)
        #expect(try store.depth(sink: "1-h:80-b") == 2)
        // "hook" moved to the first position as it was named: its positional id now is 0-…, its rows are under 1-….
        let formerIDs = ["hook": "0-h:80-b", "taken": "2-h:80-c", "new": "3-h:80-d"]
        let renames = SinkRenames(formerIDs: formerIDs, configured: ["hook", "taken", "new"])
        let renamed = try store.keepRows(of: renames)
        #expect(renamed.map(\.name) == ["hook"] && renamed.map(\.former) == ["1-h:80-b"])
        #expect(try store.outboxCountsBySink() == ["hook": 2, "2-h:80-c": 1, "taken": 1])
        #expect(try store.deadLetters(matching: DeadLetterFilter()).map(\.sink) == ["hook"])
        #expect(try store.depth(sink: "hook") == 2 && store.depth(sink: "1-h:80-b") == 0)
        #expect(try store.keepRows(of: renames).isEmpty, "a second start moves nothing")
    }

    /// `dlq list` of a file it may not write opens it read-only: it reads a current file, and says why it cannot read
    /// one an older bridge wrote (it cannot migrate it) instead of failing on a missing column.
    @Test func aReadOnlyStoreReadsACurrentFileAndNamesAnOldOne() throws {
        let store = try makeStore()
        _ = try store.insert([webhookEvent(1)], sink: "a", now: 100, limit: 10)
        var readOnly = OutboxStore.defaultOptions
        readOnly.readOnly = true
        #expect(try OutboxStore(path: store.path, options: readOnly).outboxCount(sink: "a") == 1)

        let old = try TestEnvironment.makeTemporaryDirectory(prefix: "outbox-old").path + "/webhooks.db"
        try SQLiteDatabase(path: old).migrate(Array(OutboxStore.migrations.prefix(2)))
        let error = try #require(throws: SQLiteError.self) { try OutboxStore(path: old, options: readOnly) }
        #expect(error.isUnusableFile && error.message.contains("older bridge"))
        #expect(try SQLiteDatabase(path: old).userVersion() == 2, "a reader does not migrate")
    }

    @Test func rowsSurviveReopening() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "outbox").path + "/a/b"
        do {
            let store = try OutboxStore.open(stateDir: directory)
            _ = try store.insert([webhookEvent(7)], sink: "s", now: 1, limit: 10)
        }
        let reopened = try OutboxStore.open(stateDir: directory)
        #expect(try reopened.pending(sink: "s", after: 0, limit: 10).map(\.key) == ["7"])
        #expect(try reopened.depth(sink: "s") == 1)
        #expect(try reopened.outboxCountsBySink() == ["s": 1])
        #expect(OutboxStore.existingPath(stateDir: directory) == directory + "/webhooks.db")
        #expect(OutboxStore.existingPath(stateDir: directory + "/missing") == nil)
    }

    @Test func theSinkRefusesWithARetriableErrorWhenFull() async throws {
        let store = try makeStore()
        let woken = WakeCounter()
        let sink = WebhookSink(
            sinkID: "a",
            name: "webhook:https://example.com:443",
            store: store,
            maxOutbox: 2,
            metrics: nil,
            logger: .silent,
            clock: DeliveryClock(wall: 0),
            committed: { _ in woken.increment() }
        )
        try await sink.accept([webhookEvent(1)])
        #expect(woken.value == 1)
        try await sink.accept([webhookEvent(1)])  // nothing new: no wake-up
        #expect(woken.value == 1)
        try await sink.accept([webhookEvent(2)])
        #expect(woken.value == 2)
        do {
            try await sink.accept([webhookEvent(3)])
            Issue.record("a full outbox must refuse")
        } catch {
            #expect(error.isRetriable)
            #expect(error.message.contains("outbox full"))
        }
    }
}

/// Counts calls from any thread.
final class WakeCounter: @unchecked Sendable {
    // @unchecked: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
