import BridgeEvents
import BridgeNATS
import BridgeSystem
import BridgeTestSupport
import Testing

@testable import BridgeActivity
@testable import BridgeSinks

/// Webhook dead letters in the shared bucket against a real nats-server: filed under keys valid whatever the event id
/// holds and read back byte for byte, fenced like the cursors (a bridge another one took over from files none), a
/// letter left in the journal is filed by the next term, and a replayed letter is handed out once and deleted when
/// delivered.
@Suite(.timeLimit(.minutes(3))) struct SharedDeadLetterTests {
    static let sink = "1-127.0.0.1:9/x hook"

    static func letter(_ id: String, collection: String = "articles", deadAt: Int64 = 1_000) -> DeadLetter {
        DeadLetter(
            seq: 0, sink: sink, eventID: id, collection: collection, key: "k.ey/\u{1F600}",
            body: Array("{\"id\":\"\(id)\",\"data\":\"caf\u{E9}\"}".utf8), attempts: 3, createdAt: 900, deadAt: deadAt,
            reason: "HTTP 400 is not retried", lastStatus: 400, response: [0xFF, 0xFE, 0x00, 0x41])
    }

    /// One bridge's term: its backend after the takeover, and its filer.
    struct Term {
        let backend: SharedCursorBackend
        let filer: SharedDeadLetterFiler
    }

    @Test func lettersAreFencedJournaledAndReplayedOnce() async throws {
        let bucket = try await TestBucket.start("letters")
        let store = bucket.store
        let keys = SharedStateKeys(name: "orders")
        let fenced = Reasons()
        let takeOver: @Sendable (String) throws -> Term = { holder in
            let backend = SharedCursorBackend(store: store, keys: keys, holder: holder, logger: .silent) { reason in
                fenced.value.withLock { $0.append(holder + ": " + reason) }
            }
            try backend.takeOver(sinks: [Self.sink])
            let shared = SharedSinkState()
            shared.begin(SharedSinkState.Term(store: store, keys: keys, writer: backend))
            let filer = SharedDeadLetterFiler(sinkID: Self.sink, shared: shared, logger: .silent)
            return Term(backend: backend, filer: filer)
        }
        let letters = BucketDeadLetters(store: store, keys: keys)
        try await BlockingExecutor.shared.perform {
            // Ids with every character a key may not hold: each is one valid key, and comes back as it was.
            let odd = ["act_1", "snap_a.b_c d_7", "act_2_*>/=", "snap_x_\u{E9}\u{1F600}_.._9"]
            let first = try takeOver("a")
            #expect(try first.filer.file(odd.enumerated().map { Self.letter($1, deadAt: 1_000 + Int64($0)) }).isEmpty)
            let listed = try letters.deadLetters(matching: DeadLetterFilter()).map { letter in
                var letter = letter
                letter.seq = 0  // the key's revision
                return letter
            }
            #expect(listed == odd.enumerated().map { Self.letter($1, deadAt: 1_000 + Int64($0)) })
            let odd2 = try letters.deadLetters(matching: DeadLetterFilter(ids: ["act_2_*>/="]))
            #expect(odd2.map(\.eventID) == ["act_2_*>/="])
            #expect(first.filer.deadLetterCount == nil)  // not listed yet
            #expect(try first.filer.lettersToReplay().isEmpty)
            #expect(first.filer.deadLetterCount == 4)

            // Another bridge takes over: the first one's next letter is fenced — reported, and not in the bucket.
            let second = try takeOver("b")
            #expect(throws: FencedError.self) { try first.filer.file([Self.letter("act_fenced")]) }
            #expect(try store.entry(keys.deadLetter(sink: Self.sink, eventID: "act_fenced")) == nil)
            #expect(fenced.value.withLock { $0.count } == 1)
            #expect(try second.filer.file([Self.letter("act_3")]).isEmpty)

            // A bridge that died between the journal and the letter's own key: the next term files the letter.
            let journal = BucketDeadLetters.value(of: Self.letter("act_journal"))
            try second.backend.writeFenced(
                keys.deadLetterJournal(sink: Self.sink),
                value: Array("{\"letters\":[".utf8) + journal + Array("]}".utf8))
            let third = try takeOver("c")
            #expect(try third.filer.lettersToReplay().isEmpty)
            #expect(try letters.deadLetters(matching: DeadLetterFilter()).map(\.eventID).contains("act_journal"))
            #expect(third.filer.deadLetterCount == 6)
            #expect(try store.entry(keys.deadLetterJournal(sink: Self.sink))?.value == SharedStateKeys.emptyJournal)

            // Replay: marked letters leave the listing, are handed out once, and deleted once delivered.
            let replayed = try letters.replay(matching: DeadLetterFilter(ids: ["act_1", "act_3"]), now: 5_000)
            #expect(replayed.map(\.eventID) == ["act_1", "act_3"])
            #expect(try !letters.deadLetters(matching: DeadLetterFilter()).map(\.eventID).contains("act_1"))
            #expect(try letters.replay(matching: DeadLetterFilter(ids: ["act_1"]), now: 5_000).isEmpty)
            let handed = try third.filer.lettersToReplay()
            #expect(handed.map(\.letter.eventID) == ["act_1", "act_3"])
            #expect(handed.first?.letter.body == Self.letter("act_1").body)
            #expect(handed.first?.letter.response == [0xFF, 0xFE, 0x00, 0x41])
            for (seq, stored) in handed.enumerated() { third.filer.tookIn(stored, seq: Int64(seq + 10)) }
            _ = try letters.purge(matching: DeadLetterFilter(ids: ["act_2_*>/="]))
            #expect(try third.filer.lettersToReplay().isEmpty, "letters already in the outbox are not handed out again")
            #expect(third.filer.deadLetterCount == 3)
            third.filer.committed([
                .delivered(seq: 10), .retry(seq: 11, attempts: 1, nextAttemptAt: 0, lastStatus: 503, lastError: nil),
            ])
            #expect(try store.entry(keys.deadLetter(sink: Self.sink, eventID: "act_1"))?.value == nil)
            #expect(try store.entry(keys.deadLetter(sink: Self.sink, eventID: "act_3"))?.value != nil)
        }
        await bucket.close()
    }

    /// `dlq purge --sink` of a sink no longer configured: its letters marked for replay, which no bridge takes in and
    /// `purge` skips, are dropped; its unmarked letters are purged as usual, and other sinks' marked letters stay.
    @Test func markedLettersOfASinkNoLongerConfiguredAreDropped() async throws {
        let bucket = try await TestBucket.start("dropmarked")
        let keys = SharedStateKeys(name: "orders")
        let letters = BucketDeadLetters(store: bucket.store, keys: keys)
        try await BlockingExecutor.shared.perform {
            var other = Self.letter("act_other")
            other.sink = "0-127.0.0.1:9-kept"
            for letter in [Self.letter("act_1"), Self.letter("act_2"), Self.letter("act_3"), other] {
                try letters.file(letter)
            }
            let replayed = try letters.replay(matching: DeadLetterFilter(ids: ["act_1", "act_2", "act_other"]), now: 5)
            #expect(replayed.count == 3)
            #expect(try letters.purge(matching: DeadLetterFilter(sinks: [Self.sink])).map(\.eventID) == ["act_3"])
            #expect(try letters.entries(sink: Self.sink).count == 2, "purge skips marked letters")
            #expect(try letters.dropMarked(sinks: [Self.sink], dryRun: true) == 2)
            #expect(try letters.entries(sink: Self.sink).count == 2)
            #expect(try letters.dropMarked(sinks: [Self.sink, "absent"], dryRun: false) == 2)
            #expect(try letters.entries(sink: Self.sink).isEmpty)
            #expect(try letters.entries(sink: other.sink).map(\.replay) == [true])
        }
        await bucket.close()
    }

    @Test func aLetterTooLargeForTheBucketStaysLocal() async throws {
        let bucket = try await TestBucket.start("large")
        let store = bucket.store
        let keys = SharedStateKeys(name: "orders")
        try await BlockingExecutor.shared.perform {
            let backend = SharedCursorBackend(store: store, keys: keys, holder: "a", logger: .silent) { _ in }
            try backend.takeOver(sinks: [Self.sink])
            let shared = SharedSinkState()
            shared.begin(SharedSinkState.Term(store: store, keys: keys, writer: backend))
            let filer = SharedDeadLetterFiler(sinkID: Self.sink, shared: shared, logger: .silent)
            var large = Self.letter("act_large")
            large.body = Array(repeating: UInt8(ascii: "x"), count: SharedDeadLetterFiler.largestLetter)
            let longID = String(repeating: "\u{E9}", count: 400)  // 2400 characters as a key token
            #expect(try filer.file([Self.letter("act_small"), large, Self.letter(longID)]) == [1, 2])
            let filed = try BucketDeadLetters(store: store, keys: keys).deadLetters(matching: DeadLetterFilter())
            #expect(filed.map(\.eventID) == ["act_small"])
        }
        await bucket.close()
    }
}
