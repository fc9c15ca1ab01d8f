import Synchronization

/// The messages of one `KafkaProducer.submit` call: collects one outcome per message, in submission order, and
/// calls the completion once, when the last one arrives.
///
/// Outcomes arrive from librdkafka's delivery reports (on the producer's poll thread, or the thread that serves them
/// in its turn), and from the submitting thread for messages librdkafka refused or that were never sent.
///
/// Each message has an entry (`KafkaDeliveryEntry`): its opaque for librdkafka is the entry's address, and the
/// entry holds the batch's address, so a delivery report finds the batch and the message's index without an
/// allocation per message. A delivery is recorded in the entry itself; only failures go into a dictionary. The
/// completion gets a view of the entries (`KafkaDeliveryOutcomes`), not an array: the batch's one allocation is its
/// entries (each array of outcomes was another of a kilobyte or more per batch, for which glibc's malloc first
/// merges every small block librdkafka freed since; BENCHMARKS.md, "Kafka: the sink's per-event work"; the entries
/// in blocks under a kilobyte, which merge nothing first, cost the stream more than they saved: "Kafka: the
/// producing thread's locks and allocations per event").
///
/// While outcomes remain, the batch holds one retain of itself, given back by the outcome that completes it: the
/// messages in librdkafka's hands keep it alive without a retain and a release each (two atomic operations per
/// message on one shared count; BENCHMARKS.md, "Kafka: the outcome ceiling").
final class KafkaDeliveryBatch: Sendable {
    /// Outcomes still to come: the report that takes it to zero completes the batch. Each report writes its entry
    /// before it decrements (releasing), and the last decrement acquires them all, so the entries need no lock (with
    /// one, the report path took twice the samples: BENCHMARKS.md, "Kafka: the producing thread's locks and
    /// allocations per event").
    private let remaining: Atomic<Int>
    /// The failed messages' errors, by index (empty while every message is delivered).
    private let failures = Mutex<[Int: KafkaError]>([:])
    private let completion: @Sendable (KafkaDeliveryOutcomes) -> Void
    /// One entry per message: each written by its report before `remaining`'s decrement, read-only after the last.
    private nonisolated(unsafe) let entries: UnsafeMutablePointer<KafkaDeliveryEntry>
    let count: Int

    /// A batch of `count` messages; `completion` runs on whichever thread records the last outcome.
    init(count: Int, completion: @escaping @Sendable (KafkaDeliveryOutcomes) -> Void) {
        self.remaining = Atomic(count)
        self.completion = completion
        self.count = count
        self.entries = .allocate(capacity: max(1, count))
        // Unretained: the entries only locate the batch; its retain of itself (below) keeps it alive.
        let address = Unmanaged.passUnretained(self).toOpaque()
        for index in 0..<count {
            (entries + index).initialize(to: KafkaDeliveryEntry(batch: address, index: index))
        }
        // Given back by the last outcome (`record`); an empty batch completes at once (`completeIfEmpty`).
        if count > 0 { _ = Unmanaged.passUnretained(self).retain() }
    }

    // `KafkaDeliveryEntry` is trivial: nothing to deinitialize.
    deinit { entries.deallocate() }

    /// The opaque of message `index` for librdkafka: valid until the message's outcome is recorded (the batch keeps
    /// itself alive until its last one).
    func opaque(at index: Int) -> UnsafeMutableRawPointer {
        precondition(index >= 0 && index < count, "Kafka message index out of its batch")
        return UnsafeMutableRawPointer(entries + index)
    }

    /// Records the outcome of the message whose opaque is `opaque` (its batch is alive: that outcome is still to
    /// come).
    static func reported(_ outcome: KafkaDeliveryOutcome, opaque: UnsafeMutableRawPointer) {
        let entry = opaque.assumingMemoryBound(to: KafkaDeliveryEntry.self)
        let batch = Unmanaged<KafkaDeliveryBatch>.fromOpaque(entry.pointee.batch)
        // Borrowed, not retained for the call (`takeUnretainedValue()` would be a retain and a release): its own
        // retain keeps it alive until the completing outcome, given back after the call.
        if batch._withUnsafeGuaranteedRef({ $0.record(outcome, in: entry) }) { batch.release() }
    }

    /// Records the outcome of message `index` (each index exactly once).
    func record(_ outcome: KafkaDeliveryOutcome, at index: Int) {
        precondition(index >= 0 && index < count, "Kafka message index out of its batch")
        // The caller holds the batch: its retain of itself can go within the call.
        if record(outcome, in: entries + index) { Unmanaged.passUnretained(self).release() }
    }

    /// Records an outcome; true when it was the last, and the caller gives back the batch's retain of itself.
    private func record(_ outcome: KafkaDeliveryOutcome, in entry: UnsafeMutablePointer<KafkaDeliveryEntry>) -> Bool {
        precondition(entry.pointee.state == .pending, "a Kafka message reported twice")
        switch outcome {
        case .delivered(let partition, let offset):
            entry.pointee.state = .delivered
            entry.pointee.partition = partition
            entry.pointee.offset = offset
        case .failed(let error):
            entry.pointee.state = .failed
            let index = entry.pointee.index
            failures.withLock { $0[index] = error }
        }
        guard remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return false }
        completion(KafkaDeliveryOutcomes(batch: self, failures: failures.withLock { $0 }))
        return true
    }

    /// Calls the completion of an empty batch.
    func completeIfEmpty() {
        if remaining.load(ordering: .acquiring) == 0 { completion(KafkaDeliveryOutcomes(batch: self, failures: [:])) }
    }

    /// The outcome of message `index` once every message has one (`failures`: the batch's failed messages).
    fileprivate func outcome(at index: Int, failures: [Int: KafkaError]) -> KafkaDeliveryOutcome {
        let entry = entries[index]
        if entry.state == .failed, let failure = failures[index] { return .failed(failure) }
        return .delivered(partition: entry.partition, offset: entry.offset)
    }
}

/// The outcomes of one `KafkaProducer.submit` call, one per message in submission order, read from the batch's
/// entries (no array of outcomes per batch); `Array(outcomes)` copies them.
package struct KafkaDeliveryOutcomes: RandomAccessCollection, Sendable {
    private let batch: KafkaDeliveryBatch
    private let failures: [Int: KafkaError]

    fileprivate init(batch: KafkaDeliveryBatch, failures: [Int: KafkaError]) {
        self.batch = batch
        self.failures = failures
    }

    /// 0.
    package var startIndex: Int { 0 }
    /// The number of messages.
    package var endIndex: Int { batch.count }

    /// Whether every message was delivered.
    package var allDelivered: Bool { failures.isEmpty }

    /// The outcome of message `position`.
    package subscript(position: Int) -> KafkaDeliveryOutcome {
        precondition(position >= 0 && position < batch.count, "Kafka outcome index out of its batch")
        return batch.outcome(at: position, failures: failures)
    }
}
