internal import BridgeSystem
import Synchronization

/// What librdkafka's callbacks reach through the configuration's opaque pointer: the bound on outstanding
/// messages, the producer's health, its logger.
///
/// The callbacks run on librdkafka's threads and on the thread that serves the reports; they only update this state
/// and wake a waiting `submit`, never block.
///
/// The counts a delivery report moves are atomics, not the lock: a report costs one atomic decrement and one
/// increment, as the C client's plain count does (with the lock, the report path took twice the samples:
/// BENCHMARKS.md, "Kafka: the producing thread's locks and allocations per event"). The lock keeps what a report
/// touches only rarely: the last cluster error (cleared by the first delivery after it) and the waiting `submit`.
/// `outstanding` only grows where messages are submitted (`reserve`, one `submit` at a time), so the bound holds
/// without a lock around its check.
final class KafkaProducerContext: Sendable {
    private struct Health {
        var capacityWaiter: CheckedContinuation<Void, Never>?
        var lastError: KafkaError?
    }

    /// The waiting `submit` and the last error.
    private let health = Mutex(Health())
    /// Messages produced (or reserved to be) and not reported yet.
    private let outstanding = Atomic<Int>(0)
    /// The bound on `outstanding`: the settings', lowered when librdkafka's own queue held fewer.
    private let limit: Atomic<Int>
    private let delivered = Atomic<UInt64>(0)
    private let failed = Atomic<UInt64>(0)
    /// `health.lastError` is set: the next delivery takes the lock to clear it.
    private let errorRecorded = Atomic<Bool>(false)
    /// `health.capacityWaiter` is set: a report that frees room takes the lock to resume it. Set and read
    /// sequentially consistent, as `outstanding`'s changes: either the report sees it, or the waiter sees the room.
    private let waiterPresent = Atomic<Bool>(false)
    /// Where librdkafka's log lines and cluster errors go (debug and below; the sink decides what to warn about).
    let logger: Logger
    /// Hides secret property values in librdkafka's text.
    let redactor: Redactor

    init(limit: Int, logger: Logger, redactor: Redactor) {
        self.limit = Atomic(max(1, limit))
        self.logger = logger
        self.redactor = redactor
    }

    // MARK: - Outstanding messages

    /// Takes up to `wanted` slots for messages about to be produced; 0 when the bound is reached. Called only by
    /// the one submitting task or thread (`submit` is never concurrent): the other threads only lower `outstanding`.
    func reserve(upTo wanted: Int) -> Int {
        let granted = max(0, min(wanted, limit.load(ordering: .relaxed) - outstanding.load(ordering: .relaxed)))
        if granted > 0 { outstanding.add(granted, ordering: .relaxed) }
        return granted
    }

    /// Gives back `count` reserved slots whose messages librdkafka never took.
    func unreserve(_ count: Int) {
        outstanding.subtract(count, ordering: .sequentiallyConsistent)
        resumeWaiterIfRoom()
    }

    /// librdkafka's own queue was full at `outstanding` messages: lower the bound to what it holds.
    func capacityReached() {
        limit.store(
            max(1, min(limit.load(ordering: .relaxed), outstanding.load(ordering: .relaxed))),
            ordering: .relaxed
        )
    }

    /// Waits until a slot is free; returns at once when cancelled (the caller checks cancellation).
    func waitForCapacity() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = health.withLock { health -> Bool in
                    if isBelowLimit || Task.isCancelled { return true }
                    precondition(health.capacityWaiter == nil, "KafkaProducer.submit called concurrently")
                    health.capacityWaiter = continuation
                    waiterPresent.store(true, ordering: .sequentiallyConsistent)
                    // A report that freed the room before the flag was set did not look for a waiter.
                    guard hasRoomForChunk else { return false }
                    health.capacityWaiter = nil
                    waiterPresent.store(false, ordering: .relaxed)
                    return true
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            takeWaiter(onlyIfRoom: false)?.resume()
        }
    }

    /// Whether a quarter of the bound is free (a thread serving the reports itself produces again then; the waiting
    /// `submit` is resumed then, so that it produces in chunks rather than one message per delivery report).
    var hasRoomForChunk: Bool {
        let limit = limit.load(ordering: .relaxed)
        return outstanding.load(ordering: .sequentiallyConsistent) <= limit - (limit + 3) / 4
    }

    private var isBelowLimit: Bool {
        outstanding.load(ordering: .sequentiallyConsistent) < limit.load(ordering: .relaxed)
    }

    /// A delivery report arrived: one slot is free again, and the counters move.
    func reported(delivered: Bool, error: KafkaError?) {
        outstanding.subtract(1, ordering: .sequentiallyConsistent)
        if delivered {
            self.delivered.add(1, ordering: .relaxed)
            if errorRecorded.load(ordering: .relaxed) {
                health.withLock { health in
                    health.lastError = nil
                    errorRecorded.store(false, ordering: .relaxed)
                }
            }
        } else {
            failed.add(1, ordering: .relaxed)
        }
        resumeWaiterIfRoom()
    }

    /// A message failed before librdkafka took it (no slot was used).
    func countFailedBeforeProduce() {
        failed.add(1, ordering: .relaxed)
    }

    /// Resumes the waiting `submit`, if any, once a quarter of the bound is free.
    private func resumeWaiterIfRoom() {
        guard waiterPresent.load(ordering: .sequentiallyConsistent) else { return }
        takeWaiter(onlyIfRoom: true)?.resume()
    }

    private func takeWaiter(onlyIfRoom: Bool) -> CheckedContinuation<Void, Never>? {
        health.withLock { health in
            guard !onlyIfRoom || hasRoomForChunk else { return nil }
            waiterPresent.store(false, ordering: .relaxed)
            defer { health.capacityWaiter = nil }
            return health.capacityWaiter
        }
    }

    // MARK: - Health

    /// librdkafka reported a cluster-level error (all brokers down, authentication, a fatal error).
    func recordClusterError(_ error: KafkaError) {
        health.withLock { health in
            health.lastError = error
            errorRecorded.store(true, ordering: .relaxed)
        }
        logger.debug(
            "Kafka cluster error",
            metadata: [LogKey.error: redactor.redact(error.description)]
        )
    }

    /// A snapshot of the producer's health.
    var status: KafkaProducerStatus {
        KafkaProducerStatus(
            lastError: health.withLock { $0.lastError },
            outstanding: outstanding.load(ordering: .relaxed),
            delivered: delivered.load(ordering: .relaxed),
            failed: failed.load(ordering: .relaxed)
        )
    }
}
