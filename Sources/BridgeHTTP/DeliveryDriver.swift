import BridgeSystem
import CCurl

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The delivery engine's driver: owns the multi handle and every easy handle, and runs on its own thread.
///
/// Each turn: take new jobs and cancellations from the queue, start waiting jobs while fewer than
/// `maxInFlight` run, let curl move every transfer forward (`curl_multi_perform`), hand finished ones back to
/// their receivers, then sleep in `curl_multi_poll` until a socket is ready, a curl timer fires, or the queue
/// wakes it. Receivers get each turn's outcomes in one call, so the driver never waits on a caller.
final class DeliveryDriver {
    private let multi: CurlMultiHandle
    private let queue: DeliveryQueue
    private let options: HTTPClientOptions
    private let configuration: HTTPDeliveryEngine.Configuration
    private let logger: Logger
    private var idle: [CurlEasyHandle] = []
    private var active: [UInt64: Transfer] = [:]
    /// Jobs waiting for a slot from `waitingHead` on; a started job is moved out (nil), not copied.
    private var waiting: [DeliveryJob?] = []
    private var waitingHead = 0

    /// A running job: who gets its outcome. The request itself is on the handle by then (curl's options and the
    /// handle's buffers), so the job's headers and body are let go once the transfer is prepared.
    private struct Transfer {
        let handle: CurlEasyHandle
        let receiver: DeliveryReceiver
        let tag: Int64
    }
    /// Outcomes for receivers, handed over once per turn.
    private var answers = DeliveryAnswers()
    /// Between turns while `curl_multi_poll` keeps failing: never spin, never stall for long.
    private var pollFailures = Backoff(initialDelay: .milliseconds(10), maxDelay: .seconds(1))

    /// Takes ownership of `multi`; nothing runs until `start()`.
    init(
        multi: CurlMultiHandle,
        queue: DeliveryQueue,
        options: HTTPClientOptions,
        configuration: HTTPDeliveryEngine.Configuration,
        logger: Logger
    ) {
        self.multi = multi
        self.queue = queue
        self.options = options
        self.configuration = configuration
        self.logger = logger
    }

    /// Starts the driver thread with `starter`; from here on only that thread touches this object. Throws the
    /// `SystemError` of a thread that could not be started (the process's thread limit).
    func start(with starter: DetachedThread.Starter) throws(SystemError) {
        let handOff = HandOff(driver: self)
        try starter { handOff.driver.run() }
    }

    /// The driver on its way to its thread.
    private struct HandOff: @unchecked Sendable {
        // @unchecked: ownership moves to the new thread; the starting thread no longer touches the driver.
        let driver: DeliveryDriver
    }

    private func run() {
        while true {
            let work = queue.takeWork()
            if !work.jobs.isEmpty { waiting.append(contentsOf: work.jobs.lazy.map { Optional($0) }) }
            for (receiver, onlyWaiting) in work.cancelledReceivers { cancelJobs(of: receiver, onlyWaiting: onlyWaiting) }
            if work.stopping { break }
            startWaitingJobs()
            do {
                try multi.perform()
            } catch {
                logger.debug("curl_multi_perform failed", metadata: [LogKey.error: error.message])
            }
            while let completion = multi.nextCompletion() {
                finish(completion.easy, code: completion.code)
            }
            answers.flush()
            // Slots freed above go to waiting jobs now, not after the next socket event.
            if active.count < configuration.maxInFlight && waitingHead < waiting.count { continue }
            // Jobs queued since `takeWork` did not wake this thread when it had no slot for them: take them first.
            guard queue.mayIdle(freeSlot: active.count < configuration.maxInFlight) else { continue }
            do {
                // curl shortens this to its own next timer (new handles start at once).
                try multi.poll(timeoutMilliseconds: 1000)
                pollFailures.reset()
            } catch {
                logger.debug("curl_multi_poll failed", metadata: [LogKey.error: error.message])
                queue.waitForWork(timeout: pollFailures.nextDelay())
            }
        }
        shutDown()
    }

    // MARK: - Jobs

    private func startWaitingJobs() {
        while active.count < configuration.maxInFlight && waitingHead < waiting.count {
            let job = waiting[waitingHead].take()
            waitingHead += 1
            if let job { start(job) }
        }
        if waitingHead == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            waitingHead = 0
        } else if waitingHead > 1024 && waitingHead * 2 > waiting.count {
            waiting.removeFirst(waitingHead)  // compact now and then, keeping the cost amortised
            waitingHead = 0
        }
    }

    private func start(_ job: consuming DeliveryJob) {
        let handle: CurlEasyHandle
        do throws(HTTPClientError) {
            if let reused = idle.popLast() { handle = reused } else { handle = try CurlEasyHandle.make() }
        } catch {
            complete(job.receiver, job.tag, .failure(error), sent: false)
            return
        }
        do throws(HTTPClientError) {
            try handle.prepare(job.request, options: options, cancellation: nil,
                waitForMultiplexing: configuration.multiplex)
            handle.transferID = job.id
            try multi.add(handle)
        } catch {
            recycle(handle)  // never added: nothing of this request stays on it (the next prepare resets it)
            complete(job.receiver, job.tag, .failure(error), sent: false)
            return
        }
        active[job.id] = Transfer(handle: handle, receiver: job.receiver, tag: job.tag)
    }

    private func finish(_ easy: UnsafeMutableRawPointer, code: CURLcode) {
        guard let handle = CurlEasyHandle.fromPrivate(easy), let entry = active.removeValue(forKey: handle.transferID)
        else { return }
        multi.remove(handle)
        let result = handle.finish(code: code)
        recycle(handle)
        complete(entry.receiver, entry.tag, result, sent: true)
    }

    /// Hands a job's outcome to its receiver with the rest of this turn's.
    /// `sent`: the transfer was started (a cancelled job that waited for a slot never reached the server).
    private func complete(
        _ receiver: DeliveryReceiver, _ tag: Int64, _ result: Result<HTTPResponse, HTTPClientError>, sent: Bool
    ) {
        queue.answered(1)
        answers.answer(receiver, tag, result, sent: sent)
    }

    /// Aborts the running transfer `id`.
    private func abort(_ id: UInt64, _ message: String) {
        guard let entry = active.removeValue(forKey: id) else { return }
        multi.remove(entry.handle)  // aborts the transfer and closes its connection
        _ = entry.handle.finish(code: CURLE_ABORTED_BY_CALLBACK)
        let error = Self.cancelled(entry.handle.url, message)
        recycle(entry.handle)
        complete(entry.receiver, entry.tag, .failure(error), sent: true)
    }

    /// Aborts the jobs submitted to `receiver` that wait for a slot, and with `onlyWaiting` false the running ones.
    private func cancelJobs(of receiver: DeliveryReceiver, onlyWaiting: Bool) {
        if !onlyWaiting {
            for id in active.filter({ $0.value.receiver === receiver }).keys { abort(id, "request cancelled") }
        }
        // One pass over the waiting jobs (cancelling them one id at a time would search the queue for each).
        var kept: [DeliveryJob?] = []
        kept.reserveCapacity(waiting.count - waitingHead)
        for case let job? in waiting[waitingHead...] {
            if job.receiver === receiver {
                complete(job.receiver, job.tag, .failure(Self.cancelled(job.request.url, "request cancelled")),
                    sent: false)
            } else {
                kept.append(job)
            }
        }
        waiting = kept
        waitingHead = 0
    }

    private func recycle(_ handle: CurlEasyHandle) {
        if idle.count < configuration.maxIdleHandles { idle.append(handle) }
    }

    // MARK: - Shutdown

    /// Aborts and fails every job, frees every handle (easy handles leave the multi handle first), and
    /// tells whoever waits for the stop.
    private func shutDown() {
        let leftovers = queue.close()  // after this nobody wakes the multi handle any more
        for id in Array(active.keys) { abort(id, "delivery engine shut down") }
        for job in waiting[waitingHead...].compactMap({ $0 }) + leftovers {
            complete(job.receiver, job.tag, .failure(Self.cancelled(job.request.url, "delivery engine shut down")),
                sent: false)
        }
        answers.flush()
        waiting.removeAll()
        idle.removeAll()
        for waiter in queue.finish() { waiter.resume() }
    }

    private static func cancelled(_ url: String, _ message: String) -> HTTPClientError {
        HTTPClientError(kind: .cancelled, curlCode: Int(CURLE_ABORTED_BY_CALLBACK.rawValue), message: message,
            url: url)
    }
}

@available(*, unavailable)
extension DeliveryDriver: Sendable {}
