import Synchronization
import Testing

@testable import BridgeKafka

/// A batch records its outcomes in per-message entries (no array of outcomes) that the producer reuses from one batch
/// to the next (BENCHMARKS.md, "Kafka: the sink's per-event work").
@Suite struct KafkaDeliveryBatchTests {
    @Test func outcomesComeInOrderWithEachFailureAtItsIndexAndTheEntriesServeTheNextBatch() throws {
        let pool = KafkaDeliveryEntries()
        let received = Mutex<[KafkaDeliveryOutcome]?>(nil)
        let firstEntry: UnsafeMutableRawPointer
        do {
            let batch = KafkaDeliveryBatch(count: 3, pool: pool) { outcomes in
                received.withLock { $0 = Array(outcomes) }
            }
            let opaques = (0..<3).map { batch.opaque(at: $0) }
            firstEntry = opaques[0]
            // Reports come in any order (one partition's after another's).
            KafkaDeliveryBatch.reported(.delivered(partition: 2, offset: 7), opaque: opaques[2])
            KafkaDeliveryBatch.reported(.failed(KafkaError(kind: .rejected, message: "too large")), opaque: opaques[1])
            #expect(received.withLock { $0 } == nil, "completed before the last report")
            KafkaDeliveryBatch.reported(.delivered(partition: 0, offset: 1), opaque: opaques[0])
        }
        let outcomes = try #require(received.withLock { $0 })
        #expect(outcomes.count == 3)
        guard case .delivered(0, 1) = outcomes[0], case .failed(let error) = outcomes[1],
            case .delivered(2, 7) = outcomes[2]
        else {
            Issue.record("outcomes out of place: \(outcomes)")
            return
        }
        #expect(error.kind == .rejected && error.message == "too large")

        // Every retain was consumed and the outcomes copied out: the batch is gone, and a next batch of its size
        // class (up to 16 messages) gets its entries back.
        let next = KafkaDeliveryBatch(count: 10, pool: pool) { _ in }
        let reused = next.opaque(at: 0)
        KafkaDeliveryBatch.releaseOpaque(reused)
        #expect(reused == firstEntry)
    }
}
