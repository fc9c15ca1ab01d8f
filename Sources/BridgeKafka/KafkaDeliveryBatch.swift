import Synchronization

/// The messages of one `KafkaProducer.submit` call: collects one outcome per message, in submission order, and
/// calls the completion once, when the last one arrives.
///
/// Outcomes arrive from librdkafka's delivery reports (on the producer's poll thread, or the thread of a
/// `flush`), and from the submitting task for messages librdkafka refused or that were never sent; hence the lock.
///
/// Each message's opaque for librdkafka is the address of its own slot (`opaque(at:)`), which holds the batch's
/// address and the message's index: a delivery report finds both without an allocation per message. Every message
/// handed to librdkafka holds one retain of the batch (`opaque(at:)`), consumed by its delivery report
/// (`reported(opaque:)`) or given back when librdkafka refused it (`releaseOpaque`).
///
/// Nothing of 1 KiB or more is allocated by the submitting thread (the sink's runner): the slots come in blocks
/// under that size, and the outcomes are allocated by the first outcome recorded (normally on the poll thread).
/// glibc's malloc serves a request of 1 KiB or more only after merging every small chunk freed since the last one
/// (`malloc_consolidate`), and the runner's small chunks (librdkafka's copies of each message and its headers) are
/// freed by the poll thread in their thousands: such an allocation per batch cost about a tenth of the runner's
/// time in `kafka-sink` (BENCHMARKS.md, "Kafka: the producing thread and glibc's malloc").
final class KafkaDeliveryBatch: Sendable {
    private struct State {
        /// Empty until the first outcome is recorded.
        var outcomes: [KafkaDeliveryOutcome?] = []
        var remaining: Int
    }

    /// Where a message's opaque points.
    private struct Slot {
        var batch: UnsafeMutableRawPointer
        var index: Int
    }

    /// Slots per block: 60 of 16 bytes stay under glibc's 1 KiB.
    private static let slotsPerBlock = 60

    private let state: Mutex<State>
    private let completion: @Sendable ([KafkaDeliveryOutcome]) -> Void
    /// The slots, `slotsPerBlock` per block, written once in `init`, read-only afterwards.
    private nonisolated(unsafe) let blocks: [UnsafeMutablePointer<Slot>]
    private let count: Int

    /// A batch of `count` messages; `completion` runs on whichever thread records the last outcome.
    init(count: Int, completion: @escaping @Sendable ([KafkaDeliveryOutcome]) -> Void) {
        self.state = Mutex(State(remaining: count))
        self.completion = completion
        self.count = count
        let blockCount = (count + Self.slotsPerBlock - 1) / Self.slotsPerBlock
        self.blocks = (0..<blockCount).map { _ in .allocate(capacity: Self.slotsPerBlock) }
        // Unretained: the slots only locate the batch; the retains that keep it alive are taken per message.
        let address = Unmanaged.passUnretained(self).toOpaque()
        for index in 0..<count {
            (blocks[index / Self.slotsPerBlock] + index % Self.slotsPerBlock)
                .initialize(to: Slot(batch: address, index: index))
        }
    }

    deinit {
        for block in blocks { block.deallocate() }
    }

    /// The opaque of message `index` for librdkafka, holding one retain of this batch until the message's delivery
    /// report (`reported(opaque:)`) or `releaseOpaque` consumes it.
    func opaque(at index: Int) -> UnsafeMutableRawPointer {
        precondition(index >= 0 && index < count, "Kafka message index out of its batch")
        _ = Unmanaged.passUnretained(self).retain()
        return UnsafeMutableRawPointer(blocks[index / Self.slotsPerBlock] + index % Self.slotsPerBlock)
    }

    /// Gives back the retain of an opaque librdkafka refused (it will never report that message).
    static func releaseOpaque(_ opaque: UnsafeMutableRawPointer) {
        let slot = opaque.assumingMemoryBound(to: Slot.self)
        Unmanaged<KafkaDeliveryBatch>.fromOpaque(slot.pointee.batch).release()
    }

    /// Records the outcome of the message whose opaque is `opaque` and consumes that opaque's retain.
    static func reported(_ outcome: KafkaDeliveryOutcome, opaque: UnsafeMutableRawPointer) {
        let slot = opaque.assumingMemoryBound(to: Slot.self).pointee
        let batch = Unmanaged<KafkaDeliveryBatch>.fromOpaque(slot.batch).takeRetainedValue()
        batch.record(outcome, at: slot.index)
    }

    /// Records the outcome of message `index` (each index exactly once).
    func record(_ outcome: KafkaDeliveryOutcome, at index: Int) {
        let finished = state.withLock { state -> [KafkaDeliveryOutcome]? in
            if state.outcomes.isEmpty { state.outcomes = Array(repeating: nil, count: count) }
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
