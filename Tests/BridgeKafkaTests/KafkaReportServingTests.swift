import BridgeKafka
import BridgeSystem
import BridgeTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The thread that produces serves its own delivery reports while it waits (`KafkaProducer.takeReportsOver`), so
/// librdkafka frees each message on the thread that allocated it; the poll thread stands aside until they are handed
/// back.
@Suite(.timeLimit(.minutes(5)))
struct KafkaReportServingTests {
    @Test func theSubmittingThreadServesItsReportsUntilItHandsThemBack() async throws {
        let (cluster, producer) = try await boundedProducer(topic: "served")
        let messages = eventMessages(topic: "served", count: 100, items: 10)
        let done = OutcomeBox()
        let completedOn = Mutex<pthread_t?>(nil)
        let patience = Duration.seconds(TestEnvironment.patient(30))
        let submitter = try await BlockingExecutor.shared.perform { [producer = UnsafeTransfer(value: producer)] in
            producer.value.submitBlocking(messages) { outcomes in
                completedOn.withLock { $0 = pthread_self() }
                done.store(outcomes)
            }
            // The last ten reports: served here as well, the poll thread standing aside (nobody else would).
            let deadline = ContinuousClock.now + patience
            while done.outcomes == nil && ContinuousClock.now < deadline {
                producer.value.serveReports(waitingAtMost: .milliseconds(100))
            }
            return pthread_self()
        }
        let outcomes = try #require(done.outcomes)
        #expect(allDelivered(outcomes), firstFailure(outcomes))
        let thread = try #require(completedOn.withLock { $0 })
        #expect(pthread_equal(thread, submitter) != 0, "the batch completed on another thread than the one serving")

        // Handed back: the poll thread serves again, for a task's `send` that serves nothing itself.
        producer.handReportsBack()
        let later = try await producer.send(
            eventMessages(topic: "served", count: 20, items: 5, prefix: "later"),
            within: patience
        )
        #expect(later.map(allDelivered) == true)
        #expect(producer.status.delivered == 120 && producer.status.outstanding == 0)
        await producer.close(drainTimeout: .seconds(5))
        withExtendedLifetime(cluster) {}
    }

    /// At the sink's bound the runner asks for what lingers to be sent (`sendLingering`) and serves the reports
    /// itself: the brief flush runs on the runner when no report has landed, so what lingers goes out. With
    /// librdkafka's longest linger, nothing would be sent before this test gives up without it.
    @Test func sendLingeringOnTheRunnerSendsWhatLingersWhenNoReportComes() async throws {
        let cluster = try await KafkaMockPeer.start(brokers: 1)
        try await cluster.createTopic("lingering", partitions: 2, replicationFactor: 1)
        let producer = try makeProducer(cluster.bootstrapServers, properties: ["linger.ms": "900000"])
        let messages = eventMessages(topic: "lingering", count: 100, items: 10)
        let done = OutcomeBox()
        let patience = Duration.seconds(TestEnvironment.patient(30))
        try await BlockingExecutor.shared.perform { [producer = UnsafeTransfer(value: producer)] in
            producer.value.submitBlocking(messages) { done.store($0) }
            // As the sink waits for room: asked once per wait, the wait served on this thread.
            let deadline = ContinuousClock.now + patience
            while done.outcomes == nil && ContinuousClock.now < deadline {
                producer.value.sendLingering()
                producer.value.serveReports(waitingAtMost: .milliseconds(100))
            }
            producer.value.handReportsBack()
        }
        let outcomes = try #require(done.outcomes)
        #expect(allDelivered(outcomes), firstFailure(outcomes))
        await producer.close(drainTimeout: .seconds(5))
    }
}
