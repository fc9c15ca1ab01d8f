import BridgeEvents
import BridgeNATS
import BridgeSystem
import BridgeTestSupport
import Testing

@testable import BridgeActivity
@testable import BridgeSinks

/// A broker sink's dead letters with `state.backend: jetstream`, against a real nats-server: filed in the bucket with
/// their change, listed by `dlq`, a replayed letter handed to the sink once and deleted once delivered, one refused
/// again a dead letter again; a letter too large for the bucket stays in `webhooks.db`.
@Suite(.timeLimit(.minutes(3))) struct SharedBrokerDeadLetterTests {
    static let sink = "1-jetstream-0a1b2c3d"

    static func refused(_ id: String, bytes: Int = 40) -> DeadLetter {
        let event = EncodedEvent(
            id: id, event: .update, collection: "articles", key: "7", origin: .backfill, seq: nil,
            time: Timestamp(microsecondsSinceEpoch: 0), receivedAt: Timestamp(microsecondsSinceEpoch: 2_000_000),
            subscription: "articles", body: Array(repeating: UInt8(ascii: "x"), count: bytes))
        return DeadLetter(
            refused: event, sink: sink, reason: "message size exceeds maximum", deadAt: 3_000, replay: nil)
    }

    @Test func refusedEventsAreFiledReplayedOnceAndDeletedWhenDelivered() async throws {
        let bucket = try await TestBucket.start("broker-letters")
        let store = bucket.store
        let keys = SharedStateKeys(name: "orders")
        let outbox = try OutboxStore.open(
            stateDir: try TestEnvironment.makeTemporaryDirectory(prefix: "broker-letters").path + "/state")
        try await BlockingExecutor.shared.perform {
            let backend = SharedCursorBackend(store: store, keys: keys, holder: "a", logger: .silent) { _ in }
            try backend.takeOver(sinks: [Self.sink])
            let shared = SharedSinkState()
            shared.begin(SharedSinkState.Term(store: store, keys: keys, writer: backend))
            let letters = SharedBrokerDeadLetters(
                filer: SharedDeadLetterFiler(sinkID: Self.sink, shared: shared, logger: .silent), local: outbox,
                sink: Self.sink)
            let large = Self.refused("act_large", bytes: SharedDeadLetterFiler.largestLetter)
            try letters.file(
                [Self.refused("act_1"), Self.refused("act_2"), large].map { RefusedLetter(letter: $0, replay: nil) })
            // `dlq list` (shared): the two that fit, with their change; the large one in webhooks.db.
            let bucketLetters = BucketDeadLetters(store: store, keys: keys)
            let listed = try bucketLetters.deadLetters(matching: DeadLetterFilter())
            #expect(listed.map(\.eventID) == ["act_1", "act_2"])
            #expect(listed.allSatisfy { $0.event == .update && $0.reason == "message size exceeds maximum" })
            #expect(listed.first?.body == Self.refused("act_1").body && listed.first?.createdAt == 2_000)
            #expect(try outbox.deadLetters(matching: DeadLetterFilter()).map(\.eventID) == ["act_large"])
            #expect(try letters.takeReplays(limit: 10).isEmpty)

            // `dlq replay`: each marked letter is handed to the sink once.
            _ = try bucketLetters.replay(matching: DeadLetterFilter(), now: 5_000)
            let taken = try letters.takeReplays(limit: 10)
            #expect(taken.map(\.eventID) == ["act_1", "act_2"] && taken.allSatisfy { $0.event == .update })
            #expect(try letters.takeReplays(limit: 10).isEmpty, "handed out already")
            // One delivered: gone. One refused again: a dead letter again, listed.
            try letters.delivered([taken[0]])
            let again = DeadLetter(
                refused: taken[1].replayedEvent, sink: Self.sink, reason: "still too large", deadAt: 6_000,
                replay: taken[1])
            try letters.file([RefusedLetter(letter: again, replay: taken[1])])
            #expect(try store.entry(keys.deadLetter(sink: Self.sink, eventID: "act_1"))?.value == nil)
            let relisted = try bucketLetters.deadLetters(matching: DeadLetterFilter())
            #expect(relisted.map(\.eventID) == ["act_2"] && relisted.first?.reason == "still too large")
        }
        await bucket.close()
    }
}
