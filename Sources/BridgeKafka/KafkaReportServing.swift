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
/// them back to the poll thread when it returns to wait for events (`runnerLeaves`).
///
/// The runner waits for reports in `rd_kafka_poll` (librdkafka's queue wakes it). The poll thread waits on `turn`
/// only, never inside librdkafka: librdkafka calls `reportsQueued` when a report lands in the empty queue, which
/// wakes it unless the runner serves. So the runner never waits for the poll thread to be scheduled; the one overlap
/// (the poll thread still serving when the runner took over) ends with the poll thread ending the runner's poll
/// (`rd_kafka_queue_yield`), so that the runner looks at what it served. Delivery-report callbacks therefore run on
/// either thread; the state they touch is thread-safe either way (`KafkaProducerContext`, `KafkaDeliveryBatch`).
final class KafkaReportServing: @unchecked Sendable {
    // @unchecked: `mainQueue` is written only in init and released once in `destroyQueue()`, after the poll thread
    // ended and when the runner no longer calls (the producer is closed); the rest is a lock and an atomic.

    /// How long an expedited flush lasts.
    enum FlushSpan: Int {
        /// About a millisecond: long enough to wake the broker threads while librdkafka counts as flushing (they
        /// send what lingers), short enough that the messages produced next are batched again.
        case briefly = 1
        /// Until nothing is outstanding (at most 100 ms; the caller asks again if it waits on).
        case untilDrained = 2

        /// The flush's timeout.
        var milliseconds: Int32 { self == .briefly ? 1 : 100 }
    }

    private struct Turn {
        /// The runner serves (from its first hand-over or wait until it leaves).
        var runnerServes = false
        /// Reports landed in the queue since the poll thread last served. Initially true: what was queued before the
        /// callback was set would never call it (it runs when the queue stops being empty).
        var reportsWaiting = true
        /// The poll thread is asked to end.
        var stopping = false
    }

    let handle: KafkaHandle
    private let turn = ConditionLock(Turn())
    /// The `FlushSpan` asked for (the longest since the last flush), 0 for none; whichever thread serves next runs it.
    private let expediting = Atomic<Int>(0)
    /// Reports landed in the queue since the runner last looked (`serveArrivedOnRunner`): between two messages it
    /// polls only then, not for nothing (a page's reports come after the page).
    private let landedForRunner = Atomic<Bool>(false)
    /// The queue `rd_kafka_poll` serves: its callback says when reports land, and `rd_kafka_queue_yield` ends the
    /// runner's poll in progress (from any thread, unlike `rd_kafka_yield`, which only works inside a callback).
    private let mainQueue: OpaquePointer

    init(handle: KafkaHandle) {
        self.handle = handle
        guard let queue = rd_kafka_queue_get_main(handle.pointer) else {
            preconditionFailure("librdkafka made a producer without its main queue")
        }
        mainQueue = queue
        // Unretained: `destroyQueue()` removes the callback (librdkafka calls it under the queue's lock, so none runs
        // once that returned) before this object can go.
        rd_kafka_queue_cb_event_enable(mainQueue, kafkaReportsQueued, Unmanaged.passUnretained(self).toOpaque())
    }

    // MARK: - The poll thread

    /// The poll thread's loop: serves what lands while the runner does not serve, until `stop()`.
    func runPollThread() {
        while waitForReportsToServe() {
            serveOnce(milliseconds: 0)
            // The runner may have taken over meanwhile and wait in a poll for reports this thread just served: end
            // its poll so that it looks again.
            if turn.withLock({ $0.runnerServes }) { rd_kafka_queue_yield(mainQueue) }
        }
    }

    /// Waits until reports (or an expedited flush) wait for this thread and the runner does not serve; false once
    /// stopping.
    private func waitForReportsToServe() -> Bool {
        turn.wait { turn in
            if turn.stopping { return (false, nil) }
            guard !turn.runnerServes,
                turn.reportsWaiting || expediting.load(ordering: .acquiring) != 0
            else { return (nil, nil) }
            turn.reportsWaiting = false
            return (true, nil)
        }
    }

    /// librdkafka put a report (or a cluster error) into the empty queue: the poll thread serves it, unless the
    /// runner does. Called on librdkafka's threads with the queue's lock held: takes only `turn`'s lock, which is
    /// never held around a librdkafka call.
    fileprivate func reportsQueued() {
        landedForRunner.store(true, ordering: .releasing)
        let wake = turn.withLock { turn -> Bool in
            turn.reportsWaiting = true
            return !turn.runnerServes
        }
        if wake { turn.signal() }
    }

    // MARK: - The runner

    /// The runner serves the reports from now on, until `runnerLeaves()`. Cheap when it serves already.
    func takeTurnForRunner() {
        turn.withLock { turn in
            if !turn.stopping { turn.runnerServes = true }
        }
    }

    /// Serves on the runner's thread the reports that arrived, waiting at most `timeout` (nil: until one arrives)
    /// when none has; runs an expedited flush instead when one was asked for. Takes the turn first if need be.
    func serveOnRunner(waitingAtMost timeout: Duration?) {
        takeTurnForRunner()
        if landedForRunner.load(ordering: .acquiring) {
            // Reports arrive meanwhile: the wait ends with them, and what lingers goes after linger.ms. A brief flush
            // here would hold the runner for its whole millisecond however soon the reports it waits for come.
            _ = expediting.compareExchange(
                expected: FlushSpan.briefly.rawValue,
                desired: 0,
                ordering: .acquiringAndReleasing
            )
        }
        serveOnce(milliseconds: timeout.map { Int32(clamping: $0.roundedUpMilliseconds) } ?? -1)
    }

    /// Serves on the runner's thread the reports that arrived, without waiting, when some landed since it last
    /// looked. The runner has the turn. (Cleared before the poll, which takes everything queued: a report landing
    /// after it found the queue empty and set the flag again.)
    func serveArrivedOnRunner() {
        guard landedForRunner.load(ordering: .acquiring),
            landedForRunner.exchange(false, ordering: .acquiringAndReleasing)
        else { return }
        rd_kafka_poll(handle.pointer, 0)
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

    /// The runner returns to wait for events, after serving what arrived: the poll thread serves again, at once if
    /// reports wait already.
    func runnerLeaves() {
        guard turn.withLock({ $0.runnerServes && !$0.stopping }) else { return }
        serveArrivedOnRunner()
        let left = turn.withLock { turn -> Bool in
            defer { turn.runnerServes = false }
            return turn.runnerServes && !turn.stopping
        }
        // What landed while the runner served woke nobody (`reportsQueued`); what lands from now on wakes the poll
        // thread itself.
        if left, rd_kafka_queue_length(mainQueue) > 0 || expediting.load(ordering: .acquiring) != 0 {
            reportsQueued()
        }
    }

    // MARK: - Both

    /// Has whichever thread serves next flush once for `span` instead of polling: messages held back for
    /// `linger.ms` go out now. Returns at once. A longer span asked for meanwhile wins.
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
        if pollThreadServes { turn.signal() }
    }

    /// Asks the poll thread to end (at once: it waits on `turn`, or serves without waiting, or runs an expedited
    /// flush of at most 100 ms).
    func stop() {
        turn.withLock { $0.stopping = true }
        turn.signal()
    }

    /// Removes the queue's callback and releases the queue reference, once the poll thread ended and before the
    /// handle is destroyed (a reference left over would keep rd_kafka_destroy waiting).
    func destroyQueue() {
        rd_kafka_queue_cb_event_enable(mainQueue, nil, nil)
        rd_kafka_queue_destroy(mainQueue)
    }
}

/// librdkafka's queue callback (`rd_kafka_queue_cb_event_enable`): a report landed in the empty main queue.
private func kafkaReportsQueued(_ handle: OpaquePointer?, _ opaque: UnsafeMutableRawPointer?) {
    guard let opaque else { return }
    Unmanaged<KafkaReportServing>.fromOpaque(opaque).takeUnretainedValue().reportsQueued()
}
