import Synchronization

/// The per-message entries of a producer's delivery batches (`KafkaDeliveryBatch`), kept from one batch for the next.
///
/// A batch of hundreds of messages would otherwise allocate a kilobyte or more each time, and glibc's malloc serves
/// such a request only after merging every small block freed since: on the thread that serves the delivery reports,
/// thousands per batch (librdkafka's copies of each message and its headers), which the C producer's loop never has
/// to merge (BENCHMARKS.md, "Kafka: the sink's per-event work"). Buffers come in powers of two, at least 16 entries;
/// at most `retainedLimit` entries wait for reuse, any more are freed.
///
/// Batches take and give back from any thread (a batch ends where its last retain goes: the thread that served its
/// last delivery report, or the submitting thread); hence the lock.
final class KafkaDeliveryEntries: Sendable {
    /// What a message's delivery report finds through its opaque: its batch and index, and once reported, where it
    /// was delivered (a failure's error is kept by the batch).
    struct Entry {
        /// Whether the message has an outcome, and which.
        enum State: UInt8 {
            case pending, delivered, failed
        }

        /// The batch's address (unretained: the message's opaque holds the retain).
        let batch: UnsafeMutableRawPointer
        /// The message's index in its batch.
        let index: Int
        var state = State.pending
        var partition: Int32 = -1
        var offset: Int64 = -1

        init(batch: UnsafeMutableRawPointer, index: Int) {
            self.batch = batch
            self.index = index
        }
    }

    /// `capacity` entries from `start`, uninitialized while free (`Entry` is trivial: nothing to deinitialize).
    struct Buffer: @unchecked Sendable {
        // @unchecked: a buffer belongs to one batch (which writes its entries under its own lock) or, between
        // batches, to the pool under `free`'s lock; it moves between them only through `take` and `giveBack`.
        let start: UnsafeMutablePointer<Entry>
        let capacity: Int
    }

    private struct Free {
        /// Free buffers by the power of two of their capacity.
        var buffers: [[Buffer]] = Array(repeating: [], count: Int.bitWidth)
        /// Their entries, in all.
        var entries = 0
    }

    /// Entries kept for reuse at most (32 bytes each): the batches of a full default `max_outstanding` (10,000) in
    /// pages of 500 need about 21 buffers of 512.
    static let retainedLimit = 32_768

    private let free = Mutex(Free())

    init() {}

    deinit {
        free.withLock { free in
            for buffer in free.buffers.joined() { buffer.start.deallocate() }
        }
    }

    /// A buffer of at least `count` entries: a free one of its size, else a new one.
    func take(_ count: Int) -> Buffer {
        let shift = Self.shift(for: count)
        let reused = free.withLock { free -> Buffer? in
            guard let buffer = free.buffers[shift].popLast() else { return nil }
            free.entries -= buffer.capacity
            return buffer
        }
        if let reused { return reused }
        return Buffer(start: .allocate(capacity: 1 << shift), capacity: 1 << shift)
    }

    /// Takes back a buffer whose batch ended: kept for the next batch of its size, or freed when enough wait.
    func giveBack(_ buffer: Buffer) {
        let kept = free.withLock { free -> Bool in
            guard free.entries + buffer.capacity <= Self.retainedLimit else { return false }
            free.buffers[Self.shift(for: buffer.capacity)].append(buffer)
            free.entries += buffer.capacity
            return true
        }
        if !kept { buffer.start.deallocate() }
    }

    /// The power of two of the capacity that holds `count` entries (at least 16).
    private static func shift(for count: Int) -> Int {
        max(4, Int.bitWidth - (max(count, 1) - 1).leadingZeroBitCount)
    }
}
