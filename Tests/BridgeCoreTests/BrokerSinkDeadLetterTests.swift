import BridgeEvents
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeSinks

/// A broker sink's refused events become dead letters before its cursor may move past them, and the letters
/// `dlq replay` hands back go out again under their own id (a scripted client, dead letters in memory).
@Suite(.onASinkRunnerThread) struct BrokerSinkDeadLetterTests {
    let base = BrokerSinkTests()

    /// A replayed letter as a store hands it back: `seq` its row, the change and body as refused.
    func replayed(_ n: Int, event: ChangeEvent = .delete) -> DeadLetter {
        DeadLetter(
            seq: Int64(100 + n),
            sink: "0-test",
            eventID: "act_\(n)",
            collection: "articles",
            key: "\(n)",
            body: Array(#"{"id":"act_\#(n)","big":true}"#.utf8),
            attempts: 0,
            createdAt: 1_000,
            deadAt: 1_000,
            reason: "",
            lastStatus: nil,
            response: [],
            event: event
        )
    }

    @Test func aRefusedEventIsStoredAsADeadLetterBeforeMakeDurableReturns() async throws {
        let clients = OpenedClients()
        let letters = MemoryDeadLetters()
        let (sink, registry) = base.makeSink(limit: 100, clients: clients, deadLetters: letters)
        try await sink.connect()
        let client = try #require(clients.list.withLock { $0.first })
        let events = base.events(0..<3)
        try await sink.accept(events)
        client.answerOldest { event in
            event.id == "evt_1" ? .rejected("message size exceeds maximum") : .delivered(duplicate: false)
        }
        // The store cannot take it: the cursor must not move past the event (retriable, it says why).
        letters.failing.store(true, ordering: .relaxed)
        let refused = await #expect(throws: SinkError.self) { try await sink.makeDurable() }
        #expect(
            refused?.isRetriable == true && refused?.message.contains("dead letters") == true,
            "\(String(describing: refused))"
        )
        #expect(letters.filed.withLock { $0.isEmpty })
        letters.failing.store(false, ordering: .relaxed)
        try await sink.makeDurable()
        let filed = letters.filed.withLock { $0 }
        #expect(filed.count == 1)
        let letter = try #require(filed.first?.letter)
        #expect(filed.first?.replay == nil)
        #expect(letter.eventID == "evt_1" && letter.sink == "0-test" && letter.collection == "articles")
        #expect(letter.key == "1" && letter.body == events[1].body && letter.event == .create)
        #expect(letter.reason == "message size exceeds maximum" && letter.attempts == 1 && letter.deadAt > 0)
        // Stored once: a later makeDurable or tick files nothing more.
        try await sink.tick(now: .now)
        try await sink.makeDurable()
        #expect(letters.filed.withLock { $0.count } == 1)
        let text = registry.render()
        #expect(text.contains(#"directus_bridge_broker_rejected_total{sink="0-test"} 1"#), "\(text)")
        #expect(text.contains(#"directus_bridge_broker_dead_letters_total{sink="0-test"} 1"#), "\(text)")
        #expect(text.contains(#"directus_bridge_broker_delivered_total{sink="0-test"} 2"#))
    }

    @Test func aStreamOfRefusalsLogsTenLinesAndThenATotal() async throws {
        let clients = OpenedClients()
        let letters = MemoryDeadLetters()
        let logs = RecordingLogHandler()
        let (sink, _) = base.makeSink(limit: 100, clients: clients, deadLetters: letters, logger: logs.logger())
        try await sink.connect()
        let client = try #require(clients.list.withLock { $0.first })
        try await sink.accept(base.events(0..<25))
        client.answerOldest { _ in .rejected("invalid subject") }
        let start = ContinuousClock.now
        try await sink.tick(now: start)
        #expect(letters.filed.withLock { $0.count } == 25, "every refusal is a dead letter, logged or not")
        let lines = { logs.all.filter { $0.message.contains("dead letter") } }
        #expect(lines().count == 10, "\(lines().map(\.message))")
        #expect(lines().allSatisfy { $0.level == .error && $0.metadata[LogKey.eventID] != nil })
        try await sink.tick(now: start + .seconds(5))
        #expect(lines().count == 10, "the window has not ended")
        try await sink.tick(now: start + .seconds(10))
        let total = try #require(lines().last)
        #expect(lines().count == 11 && total.message.contains("than logged one by one"), "\(total.message)")
        #expect(total.level == .error && total.fields[LogKey.count] == .integer(15), "\(total.metadata)")
    }

    @Test func aTickStoresRefusalsWhenNoCursorWaits() async throws {
        // Live mode: no makeDurable; the periodic tick stores them.
        let clients = OpenedClients()
        let letters = MemoryDeadLetters()
        let (sink, _) = base.makeSink(limit: 100, clients: clients, deadLetters: letters)
        try await sink.connect()
        let client = try #require(clients.list.withLock { $0.first })
        try await sink.accept(base.events(0..<2))
        client.answerOldest { _ in .rejected("invalid subject") }
        try await sink.tick(now: .now)
        #expect(letters.filed.withLock { $0.map(\.letter.eventID) } == ["evt_0", "evt_1"])
    }

    @Test func replayedLettersGoOutWithTheirIdAndLeaveTheStoreOnceDelivered() async throws {
        let clients = OpenedClients()
        let letters = MemoryDeadLetters()
        let (sink, _) = base.makeSink(limit: 100, clients: clients, deadLetters: letters)
        try await sink.connect()
        let client = try #require(clients.list.withLock { $0.first })
        let letter = replayed(7)
        letters.replays.withLock { $0 = [letter] }
        try await sink.tick(now: .now)
        let sent = try #require(client.handOvers.withLock { $0.first?.events.first })
        #expect(sent.id == "act_7" && sent.event == .delete && sent.body == letter.body && sent.key == "7")
        // Not delivered yet: still in the store.
        try await sink.tick(now: .now)
        #expect(letters.removed.withLock { $0.isEmpty })
        client.answerAll()
        try await sink.tick(now: .now)
        #expect(letters.removed.withLock { $0 } == [letter])
        #expect(letters.filed.withLock { $0.isEmpty })
        #expect(client.ids == ["act_7"], "taken once")
    }

    @Test func aReplayRefusedAgainIsADeadLetterAgainAndOneToRetryIsSentAgain() async throws {
        let clients = OpenedClients()
        let letters = MemoryDeadLetters()
        let (sink, _) = base.makeSink(limit: 100, clients: clients, deadLetters: letters)
        try await sink.connect()
        let client = try #require(clients.list.withLock { $0.first })
        let first = replayed(1, event: .update)
        let second = replayed(2)
        letters.replays.withLock { $0 = [first, second] }
        try await sink.tick(now: .now)
        client.answerOldest { event in event.id == "act_1" ? .rejected("still too large") : .retry("connection lost") }
        try await sink.tick(now: .now)
        let filed = letters.filed.withLock { $0 }
        #expect(filed.count == 1 && filed.first?.replay == first)
        #expect(filed.first?.letter.eventID == "act_1" && filed.first?.letter.event == .update)
        #expect(filed.first?.letter.reason == "still too large" && filed.first?.letter.createdAt == 1_000)
        // The one to send again went out again, and once delivered leaves the store.
        #expect(client.ids == ["act_1", "act_2", "act_2"])
        client.answerAll()
        try await sink.makeDurable()
        #expect(letters.removed.withLock { $0 } == [second])
    }

    /// A client that reports a whole batch delivered at once (`BrokerOutcomes.delivered`, Kafka's usual batch) lets
    /// the tracker count it without looking at each event, but not when a replayed letter is among them: the letter
    /// must still leave the store.
    @Test func aBatchReportedDeliveredAsAWholeStillReleasesTheReplayedLetterInIt() {
        let tracker = BrokerDeliveryTracker(metrics: nil)
        let letter = replayed(1)
        tracker.watch([letter])
        var events = base.events(0..<3)
        events[1].id = letter.eventID
        let first = tracker.handOver(events.count)
        tracker.finished(events, first: first, outcomes: .delivered(events.count))
        #expect(tracker.pending == 0)
        #expect(tracker.deliveredReplays == [letter])

        let more = base.events(3..<6)
        tracker.finished(more, first: tracker.handOver(more.count), outcomes: .delivered(more.count))
        #expect(tracker.pending == 0 && tracker.deliveredReplays == [letter] && tracker.redoCount == 0)
    }
}
