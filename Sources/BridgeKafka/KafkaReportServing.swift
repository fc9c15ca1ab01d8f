internal import BridgeSystem
internal import CRdKafka
import Synchronization

/// Who serves librdkafka's delivery reports (`rd_kafka_poll`): the producer's poll thread, or the producing
/// thread (a sink's runner) while it works with the producer.
///
/// librdkafka allocates about seven blocks per message on the thread that produces it and frees them on the thread
/// that serves its delivery report. With a second thread serving, glibc's malloc finds none of them in the producing
/// thread's cache and waits for the arena lock the other thread's frees hold; a producer that serves its own reports
/// frees where the next messages are allocated (BENCHMARKS.md, "Kafka: the producing thread and glibc's malloc").
/// So the runner takes the reports over while it produces and waits for outcomes (`takeTurnForRunner`), and hands
/// them back to the poll thread when it returns to wait for events (`runnerLeaves`), while nothing produces.
///
/// One thread serves at a time: a thread waiting in `rd_kafka_poll` for a report the other one took would wait out
/// its timeout. The poll thread stands aside on `turn` (it leaves a poll in progress at once:
/// `rd_kafka_queue_yield`), and the runner serves only once it stood aside. Delivery-report callbacks therefore
/// run on either thread, one after the other; the state they touch is thread-safe either way
/// (`KafkaProducerContext`, `KafkaDeliveryBatch`).
final class KafkaReportServing: @unchecked Sendable {
    // @unchecked: `mainQueue` is written only in init and destroyed once in `destroyQueue()`, after the poll thread
    // ended and when the runner no longer calls (the producer is closed); the rest is a lock and atomics.

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

    private struct Turn {
        /// The runner serves (from its first hand-over or wait until it leaves).
        var runnerServes = false
        /// The poll thread saw `runnerServes` and waits on the condition, outside librdkafka.
        var pollThreadStandsAside = false
        /// The poll thread is asked to end; nothing calls librdkafka's queue any more.
        var stopping = false
    }

    let handle: KafkaHandle
    private let turn = ConditionLock(Turn())
    /// The `FlushSpan` asked for (the longest since the last flush), 0 for none; whichever thread serves next runs it.
    private let expediting = Atomic<Int>(0)
    /// The queue `rd_kafka_poll` serves, to end a poll in progress with `rd_kafka_queue_yield` (from any thread,
    /// unlike `rd_kafka_yield`, which only works inside a callback).
    private let mainQueue: OpaquePointer?

    init(handle: KafkaHandle) {
        self.handle = handle
        mainQueue = rd_kafka_queue_get_main(handle.pointer)
    }

    // MARK: - The poll thread

    /// The poll thread's loop: serves while the runner does not, stands aside while it does, until `stop()`.
    func runPollThread() {
        // A 100 ms timeout bounds a flush; reports are served as soon as they arrive, and a yield ends the wait.
        while pollThreadMayServe() { serveOnce(milliseconds: 100) }
    }

    /// Waits while the runner serves (saying once that it stands aside); false once stopping.
    private func pollThreadMayServe() -> Bool {
        turn.wait { turn in
            if turn.stopping { return (false, nil) }
            guard turn.runnerServes else {
                turn.pollThreadStandsAside = false
                return (true, nil)
            }
            if !turn.pollThreadStandsAside {
                turn.pollThreadStandsAside = true
                self.turn.broadcast()  // the runner may wait for it (`serveOnRunner`)
            }
            return (nil, nil)
        }
    }

    // MARK: - The runner

    /// The runner serves the reports from now on, until `runnerLeaves()`; the poll thread leaves its poll at once.
    /// Cheap when the runner serves already.
    func takeTurnForRunner() {
        let taken = turn.withLock { turn -> Bool in
            guard !turn.runnerServes, !turn.stopping else { return false }
            turn.runnerServes = true
            return true
        }
        if taken, let mainQueue { rd_kafka_queue_yield(mainQueue) }
    }

    /// Serves on the runner's thread the reports that arrived, waiting at most `timeout` (nil: until one arrives)
    /// when none has; runs an expedited flush instead when one was asked for. Takes the turn first if need be, and
    /// waits for the poll thread to stand aside (at once unless it is in the middle of serving).
    func serveOnRunner(waitingAtMost timeout: Duration?) {
        takeTurnForRunner()
        let stopped = turn.wait { turn in
            turn.stopping ? (true, nil) : turn.pollThreadStandsAside ? (false, nil) : (nil, nil)
        }
        guard !stopped else { return }
        serveOnce(milliseconds: timeout.map { Int32(clamping: $0.roundedUpMilliseconds) } ?? -1)
    }

    /// Serves once on the calling thread: the asked-for flush, or a poll of at most `milliseconds` (-1: no limit).
    private func serveOnce(milliseconds: Int32) {
        if let span = FlushSpan(rawValue: expediting.exchange(0, ordering: .acquiringAndReleasing)) {
            // While a flush runs, librdkafka sends what it holds back for linger.ms at once; the flush serves reports
            // like a poll, and returns as soon as none is outstanding.
            _ = rd_kafka_flush(handle.pointer, span.milliseconds)
        } else {
            rd_kafka_poll(handle.pointer, milliseconds)
        }
    }

    /// The runner returns to wait for events: the poll thread serves again.
    func runnerLeaves() {
        let left = turn.withLock { turn -> Bool in
            defer { turn.runnerServes = false }
            return turn.runnerServes
        }
        if left { turn.broadcast() }
    }

    // MARK: - Both

    /// Has whichever thread serves next flush once for `span` instead of polling: messages held back for
    /// `linger.ms` go out now. Returns at once (ending the poll thread's poll in progress when it serves). A longer
    /// span asked for meanwhile wins.
    func expedite(_ span: FlushSpan) {
        var current = expediting.load(ordering: .acquiring)
        while current < span.rawValue {
            let (exchanged, original) = expediting.compareExchange(
                expected: current,
                desired: span.rawValue,
                ordering: .acquiringAndReleasing
            )
            if exchanged { break }
            current = original
        }
        let pollThreadServes = turn.withLock { !$0.runnerServes && !$0.stopping }
        if pollThreadServes, let mainQueue { rd_kafka_queue_yield(mainQueue) }
    }

    /// Asks the poll thread to end (it leaves a poll in progress, or its standing aside, at once).
    func stop() {
        let first = turn.withLock { turn -> Bool in
            defer { turn.stopping = true }
            return !turn.stopping
        }
        turn.broadcast()
        if first, let mainQueue { rd_kafka_queue_yield(mainQueue) }
    }

    /// Releases the queue reference, once the poll thread ended and before the handle is destroyed (a reference
    /// left over would keep rd_kafka_destroy waiting).
    func destroyQueue() {
        if let mainQueue { rd_kafka_queue_destroy(mainQueue) }
    }
}
