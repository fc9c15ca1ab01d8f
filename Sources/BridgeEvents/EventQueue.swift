internal import BridgeJSON
internal import BridgeSystem

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A sink's bounded buffer (its inbox) between the producers (socket reader, the sink's activity reader) and the
/// sink's runner thread.
///
/// Bounded by events, not batches (`delivery.max_queue`), and by the bytes of their lines
/// (`delivery.max_queue_bytes`): whichever limit is reached first makes it full, so neither many small events nor a
/// few large ones can grow memory without bound. The socket reader never waits on it — `offer` fails when full and
/// the caller counts the drop — so Directus pings are answered however slow a sink is. The activity reader waits
/// (`put`) instead, because it can re-read what it did not hand over: that is how backfill pauses while sinks are
/// behind. The sink's runner blocks in `take` on its own thread.
///
/// A batch over either limit on its own is accepted when the queue is empty, alone: memory then holds that one
/// batch (at most a frame's or a REST page's events), and no producer waits for room that can never come.
public final class EventQueue: @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `mutex` (a pthread mutex owned by this object).
    private let monitor = PthreadMonitor(clock: CLOCK_MONOTONIC)  // `take` deadlines ignore wall-clock jumps
    private var mutex: UnsafeMutablePointer<pthread_mutex_t> { monitor.mutex }
    private var notEmpty: UnsafeMutablePointer<pthread_cond_t> { monitor.condition }
    private var batches: [Slot] = []
    private var head = 0
    private var queuedEvents = 0
    private var queuedBytes = 0
    private var waitingProducers: [(id: Int, needed: Size, resume: CheckedContinuation<Void, Never>)] = []
    /// Names each `put`'s wait, so that a cancelled one removes its own continuation.
    private var nextProducer = 0
    private var closed = false
    /// `interruptTake` was called: the waiting (or next) `take` returns nil at once.
    private var interrupted = false
    /// The most events held at once.
    public let capacity: Int
    /// The most bytes (``byteCount(of:)``) held at once.
    public let maxBytes: Int

    /// A queued batch and its size, remembered so that `take` subtracts exactly what `append` added.
    private struct Slot {
        var batch: EventBatch
        var bytes: Int
    }

    /// What a batch takes of the queue's limits.
    private struct Size {
        var events: Int
        var bytes: Int
    }

    /// Creates a queue holding at most `capacity` events and `maxBytes` bytes of them (a single batch larger than
    /// either is still accepted when the queue is empty, so an oversized batch cannot deadlock).
    public init(capacity: Int, maxBytes: Int) {
        self.capacity = max(1, capacity)
        self.maxBytes = max(1, maxBytes)
    }

    deinit {
        monitor.destroy()
    }

    /// Events currently queued.
    public var depth: Int { locked { queuedEvents } }

    /// Bytes currently queued (``byteCount(of:)`` of every queued batch).
    public var bytes: Int { locked { queuedBytes } }

    /// What `batch` counts against `maxBytes`: each event's line plus its fixed share (the event value and its
    /// strings), so that empty or tiny lines still count.
    public static func byteCount(of batch: EventBatch) -> Int {
        var total = 0
        batch.events.withUnsafeBufferPointer { events in  // in place: a copy of each event retains its strings
            for index in events.indices {
                total &+=
                    events[index].body.count &+ MemoryLayout<EncodedEvent>.stride
                    &+ events[index].identifier.utf8Count &+ events[index].collection.utf8.count
                    &+ events[index].key.utf8.count &+ events[index].subscription.utf8.count
            }
        }
        return total
    }

    /// Whether `close()` was called and every batch has been taken.
    public var isClosedAndEmpty: Bool { locked { closed && head >= batches.count } }

    /// Adds `batch` if it fits; returns false (and queues nothing) when full or closed. Never blocks.
    public func offer(_ batch: EventBatch) -> Bool {
        let size = Size(events: batch.events.count, bytes: Self.byteCount(of: batch))
        let accepted = locked { () -> Bool in
            guard !closed, fits(size) else { return false }
            append(batch, size: size)
            return true
        }
        if accepted { pthread_cond_signal(notEmpty) }
        return accepted
    }

    /// Adds `batch`, waiting (without blocking a thread) until there is room. Returns false, with nothing queued, if
    /// the queue closed or the task was cancelled before there was room: a batch waiting at a full queue gives way
    /// while a `resync` is taken (`ActivityReaderLoop.waitTakingResyncs`).
    public func put(_ batch: EventBatch) async -> Bool {
        let size = Size(events: batch.events.count, bytes: Self.byteCount(of: batch))
        while true {
            let outcome = locked { () -> Bool? in
                if closed { return false }
                if fits(size) {
                    append(batch, size: size)
                    return true
                }
                return Task.isCancelled ? false : nil
            }
            if let outcome {
                if outcome { pthread_cond_signal(notEmpty) }
                return outcome
            }
            let id = locked { () -> Int in
                nextProducer += 1
                return nextProducer
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = locked { () -> Bool in
                        if closed || fits(size) || Task.isCancelled { return true }
                        waitingProducers.append((id, size, continuation))
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                // The cancelled wait leaves the line; the next producer may fit where this one did not.
                let wake = locked { () -> [CheckedContinuation<Void, Never>] in
                    guard let index = waitingProducers.firstIndex(where: { $0.id == id }) else { return [] }
                    let cancelled = waitingProducers.remove(at: index).resume
                    return [cancelled] + (admitWaitingProducer().map { [$0] } ?? [])
                }
                for continuation in wake { continuation.resume() }
            }
        }
    }

    /// Removes the oldest batch, waiting up to `timeout` for one. Returns nil on timeout, when closed and empty, or
    /// after `interruptTake`.
    public func take(timeout: Duration) -> EventBatch? {
        pthread_mutex_lock(mutex)
        if head >= batches.count && !closed {
            var deadline = timespec()
            clock_gettime(CLOCK_MONOTONIC, &deadline)
            let nanos =
                Int(timeout.components.seconds) * 1_000_000_000
                + Int(timeout.components.attoseconds / 1_000_000_000)
            let total = Int(deadline.tv_nsec) + nanos
            deadline.tv_sec += total / 1_000_000_000
            deadline.tv_nsec = total % 1_000_000_000
            while head >= batches.count && !closed && !interrupted {
                if pthread_cond_timedwait(notEmpty, mutex, &deadline) == ETIMEDOUT { break }
            }
        }
        if interrupted {
            interrupted = false
            pthread_mutex_unlock(mutex)
            return nil
        }
        guard head < batches.count else {
            pthread_mutex_unlock(mutex)
            return nil
        }
        let slot = batches[head]
        let batch = slot.batch
        // Release the taken batch's events now: the slot itself is only compacted away every ~1024 batches, and
        // 1024 backfill batches of 500 events would otherwise stay in memory long after the sinks took them.
        batches[head] = Slot(batch: EventBatch(events: [], receivedAt: batch.receivedAt), bytes: 0)
        head += 1
        queuedEvents -= batch.events.count
        queuedBytes -= slot.bytes
        if head > 1024 && head * 2 > batches.count {
            batches.removeFirst(head)
            head = 0
        }
        let wake = admitWaitingProducer()
        pthread_mutex_unlock(mutex)
        wake?.resume()
        return batch
    }

    /// Makes the waiting `take` (or the next one) return nil at once, batches or not, so that its thread acts on a
    /// request (SIGHUP's reopen) before it writes another batch.
    public func interruptTake() {
        locked { interrupted = true }
        pthread_cond_broadcast(notEmpty)
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

    private func fits(_ size: Size) -> Bool {
        queuedEvents == 0 && queuedBytes == 0
            || queuedEvents + size.events <= capacity && queuedBytes <= maxBytes - size.bytes
    }

    private func append(_ batch: EventBatch, size: Size) {
        batches.append(Slot(batch: batch, bytes: size.bytes))
        queuedEvents += size.events
        queuedBytes += size.bytes
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
