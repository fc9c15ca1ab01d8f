import BridgeKafka
import BridgeSystem
import BridgeTestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Dropping the last reference to a `KafkaProducer` without `close` leaves its release (the purge, the poll thread's
/// join, the purge's delivery reports, `rd_kafka_destroy`) to the blocking executor: the dropping thread is often one
/// of the cooperative pool's two (docs/RELIABILITY.md, issue 26).
@Suite struct KafkaReleaseTests {
    /// A message for a cluster that is not there waits in librdkafka's queue; the reports are taken over from the
    /// poll thread (as a sink's runner does), so only the release serves the purge's report, and the completion runs
    /// on whichever thread releases: never the one that dropped the producer.
    @Test func droppingAProducerReleasesItOffTheDroppingThread() async throws {
        var producer: KafkaProducer? = try makeProducer("127.0.0.1:1")
        let finished = ConditionLock<(thread: pthread_t, outcomes: [KafkaDeliveryOutcome])?>(nil)
        producer?.takeReportsOver()
        try await producer?.submit(eventMessages(topic: "nowhere", count: 1, items: 1)) { outcomes in
            finished.withLock { $0 = (pthread_self(), Array(outcomes)) }
        }
        try #require(finished.withLock { $0 == nil }, "the message was reported before the drop")
        let dropping = pthread_self()
        producer = nil
        _ = await pollUntil(timeout: .seconds(60)) { finished.withLock { $0 != nil } }
        let outcome = try #require(finished.withLock { $0 }, "the purged message was never reported")
        #expect(pthread_equal(outcome.thread, dropping) == 0, "released on the thread that dropped the producer")
        #expect(outcome.outcomes.count == 1 && outcome.outcomes.allSatisfy { !$0.isDelivered }, "\(outcome.outcomes)")
    }
}
