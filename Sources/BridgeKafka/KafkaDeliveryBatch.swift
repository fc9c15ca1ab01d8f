import Synchronization

/// The messages of one `KafkaProducer.submit` call: collects one outcome per message, in submission order, and
/// calls the completion once, when the last one arrives.
///
/// Outcomes arrive from librdkafka's delivery reports (on the producer's poll thread, or the thread of a
/// `flush`), and from the submitting task for messages librdkafka refused or that were never sent; hence the lock.
///
/// Each message's opaque for librdkafka is the address of its own slot in `slots` (`opaque(at:)`), whose content is
/// the batch's address: a delivery report finds the batch and the message's index without an allocation per
/// message. Every message handed to librdkafka holds one retain of the batch (`opaque(at:)`), consumed by its
/// delivery report (`reported(opaque:)`) or given back when librdkafka refused it (`releaseOpaque`).
final class KafkaDeliveryBatch: Sendable {
    private struct State {
        var outcomes: [KafkaDeliveryOutcome?]
        var remaining: Int
    }

    private let state: Mutex<State>
    private let completion: @Sendable ([KafkaDeliveryOutcome]) -> Void
    /// One slot per message, each holding this batch's address; written once in `init`, read-only afterwards.
    private nonisolated(unsafe) let slots: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private let count: Int

    /// A batch of `count` messages; `completion` runs on whichever thread records the last outcome.
    init(count: Int, completion: @escaping @Sendable ([KafkaDeliveryOutcome]) -> Void) {
        self.state = Mutex(State(outcomes: Array(repeating: nil, count: count), remaining: count))
        self.completion = completion
        self.count = count
        self.slots = .allocate(capacity: max(1, count))
        // Unretained: the slots only locate the batch; the retains that keep it alive are taken per message.
        slots.initialize(repeating: nil, count: max(1, count))
        let address = Unmanaged.passUnretained(self).toOpaque()
        for index in 0..<count { slots[index] = address }
    }

    deinit { slots.deallocate() }

    /// The opaque of message `index` for librdkafka, holding one retain of this batch until the message's delivery
    /// report (`reported(opaque:)`) or `releaseOpaque` consumes it.
    func opaque(at index: Int) -> UnsafeMutableRawPointer {
        precondition(index >= 0 && index < count, "Kafka message index out of its batch")
        _ = Unmanaged.passUnretained(self).retain()
        return UnsafeMutableRawPointer(slots + index)
    }

    /// Gives back the retain of an opaque librdkafka refused (it will never report that message).
    static func releaseOpaque(_ opaque: UnsafeMutableRawPointer) {
        let slot = opaque.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        guard let batch = slot.pointee else { return }
        Unmanaged<KafkaDeliveryBatch>.fromOpaque(batch).release()
    }

    /// Records the outcome of the message whose opaque is `opaque` and consumes that opaque's retain.
    static func reported(_ outcome: KafkaDeliveryOutcome, opaque: UnsafeMutableRawPointer) {
        let slot = opaque.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        guard let address = slot.pointee else { return }
        let batch = Unmanaged<KafkaDeliveryBatch>.fromOpaque(address).takeRetainedValue()
        batch.record(outcome, at: slot - batch.slots)
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
