import BridgeEvents
import BridgeSystem
import BridgeTestSupport
import Synchronization
import Testing

@testable import BridgeSinks

/// A scripted client whose outcomes arrive only when the runner serves them (`serveOutcomes`), as Kafka's delivery
/// reports do once the runner took them over; it records whether the runner holds them.
final class RunnerServedBrokerClient: BrokerClient, @unchecked Sendable {
    let scripted = ScriptedBrokerClient()
    /// Whether the runner serves the outcomes now (from a hand-over or a serve until `handOutcomesBack`).
    let runnerServes = Atomic<Bool>(false)
    let serves = Atomic<Int>(0)

    func submit(_ events: [EncodedEvent], completion: @escaping @Sendable (BrokerOutcomes) -> Void)
        async throws(SinkError)
    {
        runnerServes.store(true, ordering: .relaxed)
        try await scripted.submit(events, completion: completion)
    }

    func serveOutcomes(waitingAtMost timeout: Duration?) -> Bool {
        runnerServes.store(true, ordering: .relaxed)
        serves.add(1, ordering: .relaxed)
        scripted.answerAll()
        return true
    }

    func handOutcomesBack() { runnerServes.store(false, ordering: .relaxed) }

    /// Whether the runner holds the outcomes now.
    var servedByRunner: Bool { runnerServes.load(ordering: .relaxed) }

    var problem: String? { scripted.problem }
    var isBroken: Bool { scripted.isBroken }
    func close(drainTimeout: Duration) async { await scripted.close(drainTimeout: drainTimeout) }
}

@Suite(.onASinkRunnerThread) struct BrokerSinkServingTests {
    /// Nobody but the runner answers: `makeDurable` and a wait for room return only because the sink serves the
    /// client's outcomes while it waits, and each call hands them back before it returns.
    @Test func theRunnerServesOutcomesWhileItWaitsAndHandsThemBackOnReturning() async throws {
        let client = RunnerServedBrokerClient()
        let sink = BrokerSink(
            name: "test",
            settings: .init(
                maxOutstanding: 4,
                stallAfter: .seconds(TestEnvironment.patient(30)),
                drainTimeout: .seconds(1),
                roomWait: .seconds(TestEnvironment.patient(30)),
                replayPoll: .zero
            ),
            tracker: BrokerDeliveryTracker(metrics: nil),
            deadLetters: MemoryDeadLetters(),
            metrics: nil,
            logger: .silent
        ) { () async throws(SinkError) in client }
        try await sink.connect()
        try await sink.accept((0..<3).map { makeEvent($0) })
        #expect(!client.servedByRunner, "accept returned without handing the outcomes back")
        // Room for one more: the sink waits for room serving the outcomes.
        try await sink.accept((3..<6).map { makeEvent($0) })
        let served = client.serves.load(ordering: .relaxed)
        #expect(served > 0)
        #expect(!client.servedByRunner)
        try await sink.makeDurable()
        #expect(!client.servedByRunner, "makeDurable returned without handing them back")
        #expect(client.scripted.ids == (0..<6).map { "evt_\($0)" })
        #expect(client.scripted.handOvers.withLock { $0.isEmpty })
        try await sink.close()
    }
}
