#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The bounded buffer between the producers (socket reader, activity reader) and the dispatcher thread.
///
/// Bounded by events, not batches (`delivery.max_queue`). The socket reader never waits on it — `offer` fails when
/// full and the caller counts the drop — so Directus pings are answered however slow a sink is. The activity reader
/// waits (`put`) instead, because it can re-read what it did not hand over: that is how backfill pauses while
/// sinks are behind. The dispatcher blocks in `take` on its own thread.
public final class EventQueue: @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `mutex` (a pthread mutex owned by this object).
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let notEmpty = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var batches: [EventBatch] = []
    private var head = 0
    private var queuedEvents = 0
    private var waitingProducers: [(needed: Int, resume: CheckedContinuation<Void, Never>)] = []
    private var closed = false
    /// The most events held at once.
    public let capacity: Int

    /// Creates a queue holding at most `capacity` events (a single batch larger than that is still accepted when
    /// the queue is empty, so an oversized batch cannot deadlock).
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(notEmpty, nil)
    }

    deinit {
        pthread_cond_destroy(notEmpty)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        notEmpty.deallocate()
    }

    /// Events currently queued.
    public var depth: Int { locked { queuedEvents } }

    /// Whether `close()` was called and every batch has been taken.
    public var isClosedAndEmpty: Bool { locked { closed && head >= batches.count } }

    /// Adds `batch` if it fits; returns false (and queues nothing) when full or closed. Never blocks.
    public func offer(_ batch: EventBatch) -> Bool {
        let accepted = locked { () -> Bool in
            guard !closed, fits(batch.events.count) else { return false }
            append(batch)
            return true
        }
        if accepted { pthread_cond_signal(notEmpty) }
        return accepted
    }

    /// Adds `batch`, waiting (without blocking a thread) until there is room. Returns false if the queue closed.
    public func put(_ batch: EventBatch) async -> Bool {
        while true {
            let outcome = locked { () -> Bool? in
                if closed { return false }
                if fits(batch.events.count) {
                    append(batch)
                    return true
                }
                return nil
            }
            if let outcome {
                if outcome { pthread_cond_signal(notEmpty) }
                return outcome
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = locked { () -> Bool in
                    if closed || fits(batch.events.count) { return true }
                    waitingProducers.append((batch.events.count, continuation))
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// Removes the oldest batch, waiting up to `timeout` for one. Returns nil on timeout, or when closed and empty.
    public func take(timeout: Duration) -> EventBatch? {
        pthread_mutex_lock(mutex)
        if head >= batches.count && !closed {
            var deadline = timespec()
            clock_gettime(CLOCK_REALTIME, &deadline)
            let nanos = Int(timeout.components.seconds) * 1_000_000_000
                + Int(timeout.components.attoseconds / 1_000_000_000)
            let total = Int(deadline.tv_nsec) + nanos
            deadline.tv_sec += total / 1_000_000_000
            deadline.tv_nsec = total % 1_000_000_000
            while head >= batches.count && !closed {
                if pthread_cond_timedwait(notEmpty, mutex, &deadline) == ETIMEDOUT { break }
            }
        }
        guard head < batches.count else {
            pthread_mutex_unlock(mutex)
            return nil
        }
        let batch = batches[head]
        // Release the taken batch's events now: the slot itself is only compacted away every ~1024 batches, and
        // 1024 backfill batches of 500 events would otherwise stay in memory long after the sinks took them.
        batches[head] = EventBatch(events: [], receivedAt: batch.receivedAt)
        head += 1
        queuedEvents -= batch.events.count
        if head > 1024 && head * 2 > batches.count {
            batches.removeFirst(head)
            head = 0
        }
        let wake = admitWaitingProducer()
        pthread_mutex_unlock(mutex)
        wake?.resume()
        return batch
    }

    /// Stops accepting batches and wakes every waiter; `take` still drains what is queued.
    public func close() {
        let wake = locked { () -> [CheckedContinuation<Void, Never>] in
            closed = true
            let all = waitingProducers.map(\.resume)
            waitingProducers.removeAll()
            return all
        }
        pthread_cond_broadcast(notEmpty)
        for continuation in wake { continuation.resume() }
    }

    // MARK: - Private (call with the mutex held)

    private func fits(_ count: Int) -> Bool {
        queuedEvents == 0 || queuedEvents + count <= capacity
    }

    private func append(_ batch: EventBatch) {
        batches.append(batch)
        queuedEvents += batch.events.count
    }

    /// The first waiting producer, removed from the waiters, when its batch fits now. One per `take`: the rest
    /// wait for the next take, after the admitted one has appended (room checked once is not room for two).
    private func admitWaitingProducer() -> CheckedContinuation<Void, Never>? {
        guard let first = waitingProducers.first, fits(first.needed) else { return nil }
        waitingProducers.removeFirst()
        return first.resume
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}
