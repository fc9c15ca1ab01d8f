import Synchronization

/// The messages of one `KafkaProducer.submit` call: collects one outcome per message, in submission order, and
/// calls the completion once, when the last one arrives.
///
/// Outcomes arrive from librdkafka's delivery reports (on the producer's poll thread, or the thread of a
/// `flush`), and from the submitting task for messages librdkafka refused or that were never sent; hence the lock.
final class KafkaDeliveryBatch: Sendable {
    private struct State {
        var outcomes: [KafkaDeliveryOutcome?]
        var remaining: Int
    }

    private let state: Mutex<State>
    private let completion: @Sendable ([KafkaDeliveryOutcome]) -> Void

    /// A batch of `count` messages; `completion` runs on whichever thread records the last outcome.
    init(count: Int, completion: @escaping @Sendable ([KafkaDeliveryOutcome]) -> Void) {
        self.state = Mutex(State(outcomes: Array(repeating: nil, count: count), remaining: count))
        self.completion = completion
    }

    /// Records the outcome of message `index` (each index exactly once).
    func record(_ outcome: KafkaDeliveryOutcome, at index: Int) {
        let finished = state.withLock { state -> [KafkaDeliveryOutcome]? in
            precondition(state.outcomes[index] == nil, "a Kafka message reported twice")
            state.outcomes[index] = outcome
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            return state.outcomes.map { $0! }
        }
        if let finished { completion(finished) }
    }

    /// Calls the completion of an empty batch.
    func completeIfEmpty() {
        let empty = state.withLock { $0.remaining == 0 }
        if empty { completion([]) }
    }
}

/// The per-message opaque handed to librdkafka: which batch, which position. One allocation per message, passed
/// retained (`KafkaProducer.produce`) and released by the delivery report (`kafkaDeliveryReport`).
final class KafkaDeliveryTicket {
    /// The batch the message belongs to.
    let batch: KafkaDeliveryBatch
    /// The message's index in the batch.
    let index: Int

    init(batch: KafkaDeliveryBatch, index: Int) {
        self.batch = batch
        self.index = index
    }
}
