import Synchronization
import Testing

@testable import BridgeKafka

/// A batch records its outcomes in per-message entries, read through a view instead of an array of outcomes
/// (BENCHMARKS.md, "Kafka: the sink's per-event work").
@Suite struct KafkaDeliveryBatchTests {
    @Test func outcomesComeInOrderWithEachFailureAtItsIndexAndEveryRetainIsConsumed() throws {
        let received = Mutex<[KafkaDeliveryOutcome]?>(nil)
        weak var ended: KafkaDeliveryBatch?
        do {
            let batch = KafkaDeliveryBatch(count: 3) { outcomes in
                received.withLock { $0 = Array(outcomes) }
            }
            ended = batch
            let opaques = (0..<3).map { batch.opaque(at: $0) }
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
        // Each report consumed its message's retain and the outcomes were copied out: the batch is gone.
        #expect(ended == nil)
    }
}
