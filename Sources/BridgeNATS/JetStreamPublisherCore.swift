internal import BridgeSystem
internal import CNats

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The shared half of a `JetStreamPublisher`: the scheduler under one lock, the driver thread that publishes,
/// and the reply subscription's target.
///
/// A publish is a core NATS publish with the `Nats-Msg-Id` header and the reply subject `<replyPrefix><token>`;
/// the stream's acknowledgement comes back on the publisher's one wildcard subscription (`<replyPrefix>*`) and is
/// read in place (`JetStreamReply`), matched to its message by token. No acknowledgement within `ackTimeout`
/// (lost with a connection, or never sent) fails the publish as retriable: the scheduler publishes it again with
/// backoff, under a new token, and the stream drops the copy it may already have by its `Nats-Msg-Id`.
///
/// Threads: submitting tasks add messages (`withLock`, never waiting on the lock's condition) and, from a thread of
/// their own (`publishingHere`), publish those whose turn it is; libnats's delivery thread of the reply subscription
/// delivers answers (`received`) and publishes what they released (an item's next message) once it has read every
/// answer queued; the driver thread publishes the rest (retries, what waited for a reconnect) and times out
/// publishes. natsConnection_PublishMsg may block while libnats flushes its buffer, so never on the cooperative pool.
/// Completions run where the last outcome of a batch is recorded and must be short.
final class JetStreamPublisherCore: Sendable {
    struct State {
        var scheduler: JetStreamPublishScheduler
        var connected = true
        var stopping = false
        var capacityWaiter: CheckedContinuation<Void, Never>?
        /// `close` waiting for every held message to be answered.
        var drainedWaiter: CheckedContinuation<Void, Never>?
        /// When the driver next looks for publishes past their acknowledgement deadline.
        var nextTimeoutCheck = ContinuousClock.now
        /// Publishes, deadline checks and time-outs counted, for diagnosis.
        var activity = JetStreamPublisherActivity()
        /// Whether the driver sleeps with no deadline check timed (nothing was in flight: it sleeps until signalled,
        /// or until a retry is due, which can be `maxRetryDelay` away): a submitter that publishes itself signals it
        /// then, for the acknowledgement deadline of what it published.
        var driverIgnoresDeadlines = false
    }

    /// Messages to publish, each with the token of its reply subject.
    typealias Work = [(token: UInt, message: JetStreamMessage)]

    let lock: ConditionLock<State>
    /// `_INBOX.<unique>.`: every reply subject of this publisher starts with it (NUL-free ASCII).
    let replyPrefix: [UInt8]
    private let connection: NATSConnectionHandle
    private let ackTimeout: Duration
    /// How often the driver looks for publishes past their deadline: a publish times out within
    /// `ackTimeout + timeoutCheckInterval`.
    private let timeoutCheckInterval: Duration

    init(settings: JetStreamPublisherSettings, connection: NATSConnectionHandle, replyPrefix: String) {
        self.lock = ConditionLock(
            State(
                scheduler: JetStreamPublishScheduler(
                    limit: settings.maxOutstanding,
                    retryDelay: settings.retryDelay,
                    maxRetryDelay: settings.maxRetryDelay
                )
            )
        )
        self.connection = connection
        self.replyPrefix = Array(replyPrefix.utf8)
        self.ackTimeout = max(.milliseconds(1), settings.ackTimeout)
        self.timeoutCheckInterval = min(max(.milliseconds(1), ackTimeout / 10), .milliseconds(250))
    }

    // MARK: - Driver thread

    private enum DriverStep {
        case publish(Work)
        case complete([JetStreamPublishScheduler.Completion])
        case stop
    }

    /// The driver thread's loop: time out late publishes, publish what is ready, sleep until more is ready, a
    /// retry or deadline is due, or stop.
    func runDriver() {
        let timeoutError = NATSError.from(
            status: NATS_TIMEOUT,
            text: "no acknowledgement within \(ackTimeout)",
            context: "publish"
        )
        while true {
            let step: DriverStep = lock.wait { state in
                state.driverIgnoresDeadlines = false
                if state.stopping { return (.stop, nil) }
                let now = ContinuousClock.now
                if state.scheduler.inFlightCount > 0 && now >= state.nextTimeoutCheck {
                    state.nextTimeoutCheck = now + timeoutCheckInterval
                    let inFlight = state.scheduler.inFlightCount
                    let late = state.scheduler.timeOut(sentBefore: now - ackTimeout, error: timeoutError, now: now)
                    state.activity.recordDeadlineCheck(timedOut: inFlight - state.scheduler.inFlightCount, at: now)
                    if !late.isEmpty { return (.complete(late), nil) }
                }
                let work = Self.takeWork(&state, now: now, maximum: 256)
                if !work.isEmpty { return (.publish(work), nil) }
                var wake = state.connected ? state.scheduler.nextRetry : nil
                if state.scheduler.inFlightCount > 0 {
                    wake = min(wake ?? state.nextTimeoutCheck, state.nextTimeoutCheck)
                }
                state.driverIgnoresDeadlines = state.scheduler.inFlightCount == 0
                guard let wake else { return (nil, nil) }
                return (nil, max(.milliseconds(1), wake - now))
            }
            switch step {
            case .stop: return
            case .complete(let completions):
                for completion in completions { completion.completion(completion.outcomes) }
            case .publish(let work): publish(work)
            }
        }
    }

    /// Up to `maximum` messages ready to publish now, their tokens registered (before any is sent: an answer can
    /// arrive as soon as its publish is written); none while the connection is down (libnats would only pile them
    /// into its buffer).
    static func takeWork(_ state: inout State, now: ContinuousClock.Instant, maximum: Int) -> Work {
        guard state.connected else { return [] }
        let taken = state.scheduler.takeReady(now: now, maximum: maximum)
        var work: Work = []
        work.reserveCapacity(taken.count)
        for (slot, message) in taken {
            work.append((state.scheduler.published(slot: slot, now: now), message))
        }
        state.activity.recordPublishes(work.count, at: now)
        return work
    }

    /// Everything ready, taken (`takeWork`) to publish on the calling thread instead of the driver's (a submitter's
    /// own thread, or the reply subscription's delivery thread), and whether to wake the driver: it still keeps the
    /// acknowledgement deadline of what is published here, and sleeps without one while nothing was in flight.
    static func takeWorkHere(_ state: inout State, now: ContinuousClock.Instant) -> (Work, wakeDriver: Bool) {
        let work = takeWork(&state, now: now, maximum: .max)
        let wakeDriver = !work.isEmpty && state.driverIgnoresDeadlines
        if wakeDriver { state.driverIgnoresDeadlines = false }
        return (work, wakeDriver)
    }

    /// Publishes `work` (taken by `takeWork`) on the calling thread, which may block while libnats flushes its
    /// buffer: the driver thread, a submitter's thread of its own or the reply subscription's delivery thread, never
    /// the cooperative pool.
    func publish(_ work: Work) {
        var failures: [(token: UInt, error: NATSError)] = []
        for entry in work {
            let status = send(entry.message, token: entry.token)
            if status != NATS_OK {
                let error = NATSError.from(status: status, context: "publish to \(entry.message.subject)")
                failures.append((entry.token, error))
            }
        }
        guard !failures.isEmpty else { return }
        let now = ContinuousClock.now
        let completions = lock.withLock { state in
            failures.compactMap {
                state.scheduler.publishFailed(token: $0.token, error: $0.error, now: now)
            }
        }
        for completion in completions { completion.completion(completion.outcomes) }
    }

    /// One core publish: `message` with its `Nats-Msg-Id` header and the reply subject of `token`. The libnats
    /// message made for it is freed here, without libnats's collector (`cnats_freeMessage`).
    private func send(_ message: JetStreamMessage, token: UInt) -> natsStatus {
        // The reply subject, written on the stack: the prefix, the token's decimal digits (at most 20), a NUL.
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: replyPrefix.count + 21) { reply in
            var length = 0
            for byte in replyPrefix {
                reply[length] = CChar(bitPattern: byte)
                length += 1
            }
            var digits = 1
            var scale: UInt = 1
            while token / scale >= 10 {
                scale *= 10
                digits += 1
            }
            var rest = token
            for position in stride(from: length + digits - 1, through: length, by: -1) {
                reply[position] = CChar(bitPattern: UInt8(ascii: "0") + UInt8(rest % 10))
                rest /= 10
            }
            reply[length + digits] = 0
            var pointer: OpaquePointer?
            var status = message.payload.withUnsafeBytes { payload in
                natsMsg_Create(
                    &pointer,
                    message.subject,
                    reply.baseAddress,
                    payload.baseAddress?.assumingMemoryBound(to: CChar.self),
                    Int32(clamping: payload.count)
                )
            }
            guard status == NATS_OK, let pointer else { return status }
            defer { cnats_freeMessage(pointer) }
            status = natsMsgHeader_Set(pointer, "Nats-Msg-Id", message.messageID)
            guard status == NATS_OK else { return status }
            return natsConnection_PublishMsg(connection.pointer, pointer)
        }
    }

    // MARK: - Events from other threads

    /// The connection went away or came back (libnats's callback thread).
    func connectionChanged(to state: NATSConnectionState) {
        lock.withLock {
            $0.connected = state == .connected
            if !$0.connected { $0.activity.disconnects += 1 }
        }
        lock.signal()
    }

    /// Wakes the waiting `submit` once a quarter of the bound is free.
    static func takeWaiterIfRoom(_ state: inout State) -> CheckedContinuation<Void, Never>? {
        let limit = state.scheduler.limit
        guard let waiter = state.capacityWaiter, state.scheduler.heldCount <= limit - (limit + 3) / 4 else {
            return nil
        }
        state.capacityWaiter = nil
        return waiter
    }

    /// Waits until no message is held (every one answered) or the publisher stops; returns at once when cancelled.
    func waitUntilDrained() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = lock.withLock { state -> Bool in
                    if state.scheduler.heldCount == 0 || state.stopping || Task.isCancelled { return true }
                    state.drainedWaiter?.resume()  // one `close` at a time; never strand an older waiter
                    state.drainedWaiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            lock.withLock { $0.drainedWaiter.take() }?.resume()
        }
    }

    /// Waits until the scheduler has room; returns at once when cancelled (the caller checks).
    func waitForCapacity() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = lock.withLock { state -> Bool in
                    if state.scheduler.room > 0 || state.stopping || Task.isCancelled { return true }
                    precondition(state.capacityWaiter == nil, "JetStreamPublisher.submit called concurrently")
                    state.capacityWaiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = lock.withLock { state in
                defer { state.capacityWaiter = nil }
                return state.capacityWaiter
            }
            waiter?.resume()
        }
    }
}

/// A `jsCtx` pointer that may cross threads: libnats's JetStream publish calls lock the context internally; only
/// `jsCtx_Destroy` must not run concurrently with them, and only the owning `JetStreamPublisher` calls it, after
/// its driver thread has ended.
struct JetStreamHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
