import Dispatch
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
        // The last report gave back the batch's retain of itself and the outcomes were copied out: the batch is gone.
        #expect(ended == nil)
    }

    /// The messages in librdkafka's hands hold no retain each: the batch keeps itself alive until its last outcome,
    /// whoever else lets go of it, and not after.
    @Test func aBatchLivesUntilItsLastOutcomeWithNothingElseHoldingIt() {
        weak var ended: KafkaDeliveryBatch?
        let completed = Mutex(0)
        var opaques: [UnsafeMutableRawPointer] = []
        do {
            let batch = KafkaDeliveryBatch(count: 3) { _ in completed.withLock { $0 += 1 } }
            ended = batch
            opaques = (0..<3).map { batch.opaque(at: $0) }
        }
        #expect(ended != nil, "gone with outcomes to come")
        KafkaDeliveryBatch.reported(.delivered(partition: 0, offset: 0), opaque: opaques[0])
        ended?.record(.failed(KafkaError(kind: .retriable, message: "refused")), at: 1)
        #expect(ended != nil && completed.withLock { $0 } == 0)
        KafkaDeliveryBatch.reported(.delivered(partition: 0, offset: 1), opaque: opaques[2])
        #expect(completed.withLock { $0 } == 1)
        #expect(ended == nil, "alive after its last outcome")
    }

    /// Reports of one batch served by two threads at once (the runner and the poll thread, in a hand-over): the
    /// batch counts down without a lock, and completes exactly once, with every outcome at its index.
    @Test func reportsFromTwoThreadsAtOnceCompleteTheBatchOnceWithEveryOutcome() throws {
        let count = 2_000
        let completions = Mutex<[[KafkaDeliveryOutcome]]>([])
        let batch = KafkaDeliveryBatch(count: count) { outcomes in
            completions.withLock { $0.append(Array(outcomes)) }
        }
        let opaques = (0..<count).map { SendableOpaque(pointer: batch.opaque(at: $0)) }
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            for index in stride(from: half, to: count, by: 2) {
                let outcome: KafkaDeliveryOutcome =
                    index % 7 == 3
                    ? .failed(KafkaError(kind: .retriable, message: "m\(index)"))
                    : .delivered(partition: Int32(index % 6), offset: Int64(index))
                KafkaDeliveryBatch.reported(outcome, opaque: opaques[index].pointer)
            }
        }
        let received = completions.withLock { $0 }
        #expect(received.count == 1)
        let outcomes = try #require(received.first)
        #expect(outcomes.count == count)
        for (index, outcome) in outcomes.enumerated() {
            switch outcome {
            case .delivered(let partition, let offset):
                #expect(index % 7 != 3 && partition == Int32(index % 6) && offset == Int64(index), "at \(index)")
            case .failed(let error):
                #expect(index % 7 == 3 && error.message == "m\(index)", "at \(index)")
            }
        }
    }
}

/// A message's opaque handed to another thread (the test's stand-in for librdkafka handing it back).
private struct SendableOpaque: @unchecked Sendable {
    // @unchecked: the pointer is only passed back to `KafkaDeliveryBatch.reported`, once, as librdkafka would.
    let pointer: UnsafeMutableRawPointer
}
