import BridgeSystem
import Synchronization

/// One request handed to the delivery driver, with the receiver that gets its outcome.
struct DeliveryJob: Sendable {
    /// Unique per engine; the driver names running transfers by it.
    let id: UInt64
    /// What to send.
    let request: HTTPRequest
    /// Gets the outcome exactly once, with `tag`: from the driver, or from `submit` when the job is refused.
    let receiver: DeliveryReceiver
    /// The caller's tag for the request.
    let tag: Int64
}

/// What the driver picks up on each turn of its loop.
struct DeliveryWork: Sendable {
    /// New jobs, in arrival order.
    var jobs: [DeliveryJob] = []
    /// Receivers whose jobs are to be cancelled: all of them, or only those not started yet.
    var cancelledReceivers: [(receiver: DeliveryReceiver, onlyWaiting: Bool)] = []
    /// Whether the engine is shutting down.
    var stopping = false
}

/// The hand-over point between calling tasks and the driver thread: new jobs, cancellations, stop.
///
/// All state is behind one lock. The driver's multi handle is woken (`curl_multi_wakeup`) under the same
/// lock and never after `markStopped()`, so the waker is never used on a freed handle; the lock's condition is
/// signalled too, for a driver that waits on it instead (`waitForWork`, after `curl_multi_poll` failed).
///
/// New jobs wake the driver only when it may sleep with a free slot (`mayIdle`): a driver whose slots are all
/// taken turns again when one of its transfers ends, and takes the queued jobs then. Waking it anyway cost a
/// `send` on curl's wake-up socket, a `poll` that returned at once and a turn over every transfer, for jobs it
/// had no slot for (BENCHMARKS.md, "Webhook @8: CPU per delivery").
final class DeliveryQueue: Sendable {
    private struct State {
        var work = DeliveryWork()
        /// The driver sleeps, or is about to, with a slot free: the next jobs must wake it.
        var wakeForJobs = true
        /// Wake-ups sent to the driver (`wakeUps`).
        var wakeUps = 0
        /// The driver no longer takes work and its waker is gone.
        var closed = false
        /// The driver has freed its handles and exited.
        var finished = false
        var waker: CurlMultiWaker?
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: ConditionLock<State>
    private let outstandingJobs = Atomic<Int>(0)

    /// Jobs submitted and not answered yet (an engine with several drivers sends new ones to the least loaded).
    var outstanding: Int { outstandingJobs.load(ordering: .relaxed) }

    /// Driver: `count` jobs were answered.
    func answered(_ count: Int) {
        outstandingJobs.subtract(count, ordering: .relaxed)
    }

    /// Creates the queue for the driver whose multi handle `waker` wakes.
    init(waker: CurlMultiWaker) {
        state = ConditionLock(State(waker: waker))
    }

    /// Queues `jobs` (in order), or fails them at once when the engine is stopping.
    func submit(_ jobs: [DeliveryJob]) {
        guard !jobs.isEmpty else { return }
        let refusal: HTTPClientError? = state.withLock { state in
            if state.closed || state.work.stopping {
                return HTTPClientError(kind: .cancelled, message: "delivery engine shut down", url: jobs[0].request.url)
            }
            // One wake-up per idle spell, none for a driver without a free slot (see `mayIdle`).
            if state.wakeForJobs {
                state.wakeForJobs = false
                wakeDriver(&state)
            }
            state.work.jobs.append(contentsOf: jobs)
            outstandingJobs.add(jobs.count, ordering: .relaxed)
            return nil
        }
        guard let refusal else { return }
        var answers = DeliveryAnswers()
        for job in jobs { answers.answer(job.receiver, job.tag, .failure(refusal), sent: false) }
        answers.flush()
    }

    /// Asks the driver to abort every job submitted to `receiver` (finished ones are not affected), or only those
    /// that have not started.
    func cancel(receiver: DeliveryReceiver, onlyWaiting: Bool) {
        state.withLock { state in
            guard !state.closed else { return }
            state.work.cancelledReceivers.append((receiver, onlyWaiting))
            wakeDriver(&state)
        }
    }

    /// Asks the driver to stop (idempotent).
    func requestStop() {
        state.withLock { state in
            guard !state.closed, !state.work.stopping else { return }
            state.work.stopping = true
            wakeDriver(&state)
        }
    }

    /// Asks the driver to stop and waits until it has freed its handles.
    func stopAndWait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let finished = state.withLock { state in
                if state.finished { return true }
                state.exitWaiters.append(continuation)
                if !state.closed && !state.work.stopping {
                    state.work.stopping = true
                    wakeDriver(&state)
                }
                return false
            }
            if finished { continuation.resume() }
        }
    }

    /// Wake-ups sent to the driver so far (tests count them).
    var wakeUps: Int { state.withLock { $0.wakeUps } }

    /// Wakes the driver, in `curl_multi_poll` or in `waitForWork` (with the lock held).
    private func wakeDriver(_ locked: inout State) {
        locked.wakeUps += 1
        locked.waker?.wakeUp()
        state.signal()
    }

    /// Driver, after `curl_multi_poll` failed (its wake-up cannot be relied on then): waits up to `timeout`,
    /// returning early when jobs, a cancellation or a stop arrive.
    func waitForWork(timeout: Duration) {
        _ = state.wait(until: .now + timeout) { state in
            !state.work.jobs.isEmpty || !state.work.cancelledReceivers.isEmpty || state.work.stopping
        }
    }

    /// Driver, before it sleeps: false when jobs wait that it has a free slot for (take them first). Otherwise
    /// notes whether the next jobs must wake it: only when it has a free slot; with none, the end of one of its
    /// transfers turns it, and it asks again then. Cancellations and stops always wake it.
    func mayIdle(freeSlot: Bool) -> Bool {
        state.withLock { state in
            if freeSlot && !state.work.jobs.isEmpty { return false }
            state.wakeForJobs = freeSlot
            return true
        }
    }

    /// Driver: takes everything queued since the last turn.
    func takeWork() -> DeliveryWork {
        state.withLock { state in
            // Moved out, not copied and emptied in place: emptying an array the caller shares would allocate.
            let work = state.work
            if !work.jobs.isEmpty { state.work.jobs = [] }
            if !work.cancelledReceivers.isEmpty { state.work.cancelledReceivers = [] }
            return work
        }
    }

    /// Driver, before freeing the multi handle: forgets the waker, refuses new jobs, and returns the jobs
    /// that arrived after the last `takeWork()`.
    func close() -> [DeliveryJob] {
        state.withLock { state in
            state.closed = true
            state.waker = nil
            let leftovers = state.work.jobs
            state.work = DeliveryWork()
            return leftovers
        }
    }

    /// Driver, after freeing its handles: marks the engine finished and returns the tasks to resume.
    func finish() -> [CheckedContinuation<Void, Never>] {
        state.withLock { state in
            state.finished = true
            let waiters = state.exitWaiters
            state.exitWaiters = []
            return waiters
        }
    }
}
