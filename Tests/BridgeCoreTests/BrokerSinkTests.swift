import BridgeEvents
import BridgeSystem
import Foundation
import Synchronization
import Testing

@testable import BridgeSinks

/// A broker client whose outcomes the test decides: it records every hand-over and answers when told.
final class ScriptedBrokerClient: BrokerClient, @unchecked Sendable {
    struct HandOver {
        var events: [EncodedEvent]
        var completion: @Sendable (BrokerOutcomes) -> Void
    }

    /// Hand-overs not answered yet.
    let handOvers = Mutex<[HandOver]>([])
    /// Every id handed over, in order.
    let history = Mutex<[String]>([])
    let broken = Atomic<Bool>(false)
    let closed = Atomic<Bool>(false)
    let problemText = Mutex<String?>(nil)
    /// `expedite` calls, each with how many hand-overs were open then.
    let expedited = Mutex<[Int]>([])
    /// `sendLingering` calls (waits for room at the bound).
    let lingeringSent = Atomic<Int>(0)

    func submit(_ events: [EncodedEvent], completion: @escaping @Sendable (BrokerOutcomes) -> Void)
        async throws(SinkError)
    {
        handOvers.withLock { $0.append(HandOver(events: events, completion: completion)) }
        history.withLock { $0 += events.map(\.id) }
    }

    func expedite() {
        let open = handOvers.withLock { $0.count }
        expedited.withLock { $0.append(open) }
    }

    func sendLingering() { lingeringSent.add(1, ordering: .relaxed) }

    var problem: String? { problemText.withLock { $0 } }
    var isBroken: Bool { broken.load(ordering: .relaxed) }

    func close(drainTimeout: Duration) async {
        closed.store(true, ordering: .relaxed)
        // What is still held gets its outcome, as a real client's purge does.
        let open = handOvers.withLock { list in
            defer { list.removeAll() }
            return list
        }
        for handOver in open { handOver.completion(BrokerOutcomes(handOver.events.map { _ in .retry("closed") })) }
    }

    /// The ids handed over so far, in order.
    var ids: [String] { history.withLock { $0 } }

    /// Answers the oldest open hand-over with `outcome` for each of its events.
    func answerOldest(_ outcome: (EncodedEvent) -> BrokerOutcome) {
        let first = handOvers.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let first else { return }
        first.completion(BrokerOutcomes(first.events.map(outcome)))
    }

    func answerAll(_ outcome: BrokerOutcome = .delivered(duplicate: false)) {
        while handOvers.withLock({ !$0.isEmpty }) { answerOldest { _ in outcome } }
    }
}

/// The clients a sink opened, in order.
final class OpenedClients: Sendable {
    let list = Mutex<[ScriptedBrokerClient]>([])
}

/// A broker sink's dead letters in memory: what was filed, replayed letters waiting to be taken, and those removed
/// as delivered; filing fails while `failing` is set.
final class MemoryDeadLetters: BrokerDeadLetters {
    struct Unavailable: Error {}

    let sink = "0-test"
    let filed = Mutex<[RefusedLetter]>([])
    let replays = Mutex<[DeadLetter]>([])
    let removed = Mutex<[DeadLetter]>([])
    let failing = Atomic<Bool>(false)

    func file(_ letters: [RefusedLetter]) throws {
        if failing.load(ordering: .relaxed) { throw Unavailable() }
        filed.withLock { $0 += letters }
    }

    func takeReplays(limit: Int) throws -> [DeadLetter] {
        replays.withLock { waiting in
            let taken = Array(waiting.prefix(limit))
            waiting.removeFirst(taken.count)
            return taken
        }
    }

    func delivered(_ replays: [DeadLetter]) throws { removed.withLock { $0 += replays } }
}

/// `BrokerSink`'s delivery rules with a scripted client: bounded outstanding, confirmation before `makeDurable`
/// returns, failures sent again before anything newer, broken clients replaced, refused events dead letters
/// (BrokerSinkDeadLetterTests).
@Suite(.onASinkRunnerThread) struct BrokerSinkTests {
    func makeSink(
        limit: Int = 4,
        stallAfter: Duration = .milliseconds(300),
        clients: OpenedClients,
        deadLetters: MemoryDeadLetters = MemoryDeadLetters(),
        logger: Logger = .silent
    ) -> (BrokerSink, MetricsRegistry) {
        let registry = MetricsRegistry()
        let metrics = BrokerSinkMetrics(registry: registry, sink: "0-test")
        let tracker = BrokerDeliveryTracker(metrics: metrics)
        let sink = BrokerSink(
            name: "test",
            settings: .init(
                maxOutstanding: limit,
                stallAfter: stallAfter,
                drainTimeout: .milliseconds(300),
                roomWait: .milliseconds(100),
                replayPoll: .zero
            ),
            tracker: tracker,
            deadLetters: deadLetters,
            metrics: metrics,
            logger: logger
        ) { () async throws(SinkError) in
            let client = ScriptedBrokerClient()
            clients.list.withLock { $0.append(client) }
            return client
        }
        return (sink, registry)
    }

    func events(_ range: Range<Int>) -> [EncodedEvent] { range.map { makeEvent($0) } }

    @Test func atTheBoundAcceptReportsBackpressureAndAnOversizedBatchIsFedAsRoomFrees() async throws {
        let clients = OpenedClients()
        let (sink, _) = makeSink(clients: clients)
        try await sink.connect()
        let client = try #require(clients.list.withLock { $0.first })
        try await sink.accept(events(0..<3))
        let full = await #expect(throws: SinkError.self) { try await sink.accept(events(3..<5)) }
        #expect(full?.isBackpressure == true && full?.isRetriable == true)
        // Waiting for room sent what lingered, without making the client send every later event at once.
        #expect(client.lingeringSent.load(ordering: .relaxed) == 1 && client.expedited.withLock { $0.isEmpty })
        client.answerAll()
        // Ten events with room for four: four now, the rest as confirmations come.
        try await sink.accept(events(3..<13))
        #expect(client.ids.count == 3 + 4)
        for _ in 0..<3 {
            client.answerAll()
            try await sink.tick(now: ContinuousClock.now)
        }
        #expect(client.ids == (0..<13).map { "evt_\($0)" })
    }

    @Test func makeDurableWaitsForEveryConfirmationAndReportsAStall() async throws {
        let clients = OpenedClients()
        let (sink, _) = makeSink(clients: clients)
        try await sink.connect()
        let client = try #require(clients.list.withLock { $0.first })
        try await sink.accept(events(0..<2))
        client.problemText.withLock { $0 = "connection lost" }
        let stalled = await #expect(throws: SinkError.self) { try await sink.makeDurable() }
        #expect(stalled?.isRetriable == true && stalled?.message.contains("connection lost") == true, "\(stalled!)")
        // Before waiting, the client was asked to send what it holds back to fill a batch: nothing more comes.
        #expect(client.expedited.withLock { $0 } == [1])
        client.answerAll()
        try await sink.makeDurable()
        #expect(client.handOvers.withLock { $0.isEmpty })
        #expect(client.expedited.withLock { $0 } == [1], "nothing pending: no need to expedite")
    }

    @Test func failedEventsAreSentAgainBeforeNewerOnesAndRefusedOnesAreNot() async throws {
        let clients = OpenedClients()
        let (sink, registry) = makeSink(limit: 100, clients: clients)
        try await sink.connect()
        let client = try #require(clients.list.withLock { $0.first })
        try await sink.accept(events(0..<4))
        client.answerOldest { event in
            switch event.id {
            case "evt_1": .retry("not authorized")
            case "evt_2": .rejected("too large")
            default: .delivered(duplicate: event.id == "evt_3")
            }
        }
        // The failed event goes out again before the next batch.
        try await sink.accept(events(4..<5))
        #expect(client.ids == ["evt_0", "evt_1", "evt_2", "evt_3", "evt_1", "evt_4"])
        // It fails again: until its backoff is due, nothing newer is taken, and the error says why.
        client.answerOldest { _ in .retry("not authorized") }
        let waiting = await #expect(throws: SinkError.self) { try await sink.accept(events(5..<6)) }
        #expect(waiting?.message.contains("not authorized") == true && waiting?.isBackpressure == false)
        await #expect(throws: SinkError.self) { try await sink.tick(now: ContinuousClock.now) }
        try await Task.sleep(for: .milliseconds(600))  // the resend backoff (0.5 s) is due
        try await sink.tick(now: ContinuousClock.now)
        #expect(client.ids.suffix(2) == ["evt_4", "evt_1"])
        client.answerAll()
        try await sink.makeDurable()
        try await sink.accept(events(5..<6))
        #expect(client.ids.last == "evt_5")
        let text = registry.render()
        #expect(text.contains(#"directus_bridge_broker_rejected_total{sink="0-test"} 1"#), "\(text)")
        #expect(text.contains(#"directus_bridge_broker_resent_total{sink="0-test"} 2"#))
        #expect(text.contains(#"directus_bridge_broker_duplicates_total{sink="0-test"} 1"#))
        #expect(text.contains(#"directus_bridge_broker_delivered_total{sink="0-test"} 4"#))
    }

    /// A broker that stays connected and answers nothing (a SIGSTOPped redis-server or mosquitto): its client has no
    /// problem to report, yet nothing is confirmed. `directus_bridge_broker_healthy` says 0 once events have waited the
    /// sink's stall time, and 1 again when confirmations come. Before, it said 1 throughout: it looked only at the
    /// client's problem (docs/RELIABILITY.md, "The broker sinks at scale").
    @Test func aBrokerThatConfirmsNothingShowsInTheHealthGauge() async throws {
        let clients = OpenedClients()
        let (sink, registry) = makeSink(clients: clients)
        let healthy = { registry.render().contains(#"directus_bridge_broker_healthy{sink="0-test"} 1"#) }
        try await sink.connect()
        let client = try #require(clients.list.withLock { $0.first })
        try await sink.accept(events(0..<2))
        try await sink.tick(now: ContinuousClock.now)
        #expect(healthy(), "waiting less than the stall time is not a problem")
        try await Task.sleep(for: .milliseconds(400))  // past the stall time (300 ms), nothing confirmed
        try await sink.tick(now: ContinuousClock.now)
        #expect(!healthy(), "\(registry.render())")
        client.answerAll()
        try await sink.tick(now: ContinuousClock.now)
        #expect(healthy())
        try await sink.makeDurable()
    }

    @Test func aBrokenClientIsReplacedAndWhatItHeldIsSentOnTheNewOne() async throws {
        let clients = OpenedClients()
        let (sink, _) = makeSink(limit: 100, clients: clients)
        try await sink.connect()
        let first = try #require(clients.list.withLock { $0.first })
        try await sink.accept(events(0..<3))
        first.broken.store(true, ordering: .relaxed)
        try? await sink.makeDurable()  // replaces the client: its three come back and go out on the new one
        let second = try #require(clients.list.withLock { $0.count == 2 ? $0[1] : nil })
        let firstClosed = first.closed.load(ordering: .relaxed)
        #expect(firstClosed)
        #expect(second.ids == ["evt_0", "evt_1", "evt_2"])
        second.answerAll()
        try await sink.makeDurable()
    }
}
