internal import BridgeSystem
internal import CRdKafka
import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// An `rd_kafka_t` that may cross threads. librdkafka's calls on one handle are thread-safe (`rd_kafka_poll`,
/// `rd_kafka_flush`, `rd_kafka_metadata`, produce), except `rd_kafka_destroy`, which only the owning
/// `KafkaProducer` calls, once, after every other user has stopped (the swift-kafka-client
/// `SendableOpaquePointer` precedent).
struct KafkaHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// A thread of its own that serves librdkafka's callbacks (`rd_kafka_poll`), so delivery reports never wait for,
/// or occupy, Swift's cooperative pool.
final class KafkaPollThread {
    /// How long an expedited flush lasts.
    enum FlushSpan: Int {
        /// About a millisecond: long enough to wake the broker threads while librdkafka counts as flushing (they
        /// send what lingers), short enough that the messages produced next are batched again.
        case briefly = 1
        /// Until nothing is outstanding (at most one poll timeout, 100 ms; the caller asks again if it waits on).
        case untilDrained = 2

        /// The flush's timeout.
        var milliseconds: Int32 { self == .briefly ? 1 : 100 }
    }

    private final class Loop: Sendable {
        let handle: KafkaHandle
        let stopping = Atomic<Bool>(false)
        /// The `FlushSpan` asked for (the longest since the last flush), 0 for none.
        let expediting = Atomic<Int>(0)

        init(handle: KafkaHandle) { self.handle = handle }

        func run() {
            // A 100 ms timeout bounds how long `stop()` waits; reports are served as soon as they arrive.
            while !stopping.load(ordering: .acquiring) {
                if let span = FlushSpan(rawValue: expediting.exchange(0, ordering: .acquiringAndReleasing)) {
                    // While a flush runs, librdkafka sends what it holds back for linger.ms at once; the flush
                    // serves reports like a poll, and returns as soon as none is outstanding.
                    _ = rd_kafka_flush(handle.pointer, span.milliseconds)
                } else {
                    rd_kafka_poll(handle.pointer, 100)
                }
            }
        }
    }

    private let loop: Loop
    private var thread: DetachedThread.Joinable?
    /// The queue `rd_kafka_poll` serves, to wake the thread with `rd_kafka_queue_yield` (from any thread, unlike
    /// `rd_kafka_yield`, which only works inside a callback). Released when the thread stopped.
    private let mainQueue: OpaquePointer?

    /// Starts polling `handle`; throws when the system refuses a thread.
    init(handle: KafkaHandle) throws(KafkaError) {
        loop = Loop(handle: handle)
        mainQueue = rd_kafka_queue_get_main(handle.pointer)
        do {
            // The thread holds the loop until it returns: the loop outlives this object if need be.
            thread = try DetachedThread.startJoinable { [loop] in loop.run() }
        } catch {
            if let mainQueue { rd_kafka_queue_destroy(mainQueue) }
            throw KafkaError(
                kind: error.isRetriable ? .retriable : .fatal,
                message: "could not start the delivery-report thread: \(error)")
        }
    }

    deinit { stop() }

    /// Makes the thread flush instead of poll, once, for `span`: messages held back for `linger.ms` go out now.
    /// Returns at once (the yield ends the poll in progress). A longer span asked for meanwhile wins.
    func expedite(_ span: FlushSpan) {
        guard thread != nil, let mainQueue else { return }
        var current = loop.expediting.load(ordering: .acquiring)
        while current < span.rawValue {
            let (exchanged, original) = loop.expediting.compareExchange(
                expected: current,
                desired: span.rawValue,
                ordering: .acquiringAndReleasing
            )
            if exchanged { break }
            current = original
        }
        rd_kafka_queue_yield(mainQueue)
    }

    /// Stops polling and waits for the thread to end (at most one poll timeout). Idempotent.
    func stop() {
        guard let thread else { return }
        loop.stopping.store(true, ordering: .releasing)
        thread.join()
        self.thread = nil
        // Before the handle is destroyed: a queue reference left over would keep rd_kafka_destroy waiting.
        if let mainQueue { rd_kafka_queue_destroy(mainQueue) }
    }
}
