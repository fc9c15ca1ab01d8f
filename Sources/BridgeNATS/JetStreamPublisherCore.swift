internal import BridgeSystem
internal import CNats

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The shared half of a `JetStreamPublisher`: the scheduler under one lock, the driver thread that publishes,
/// and the acknowledgement callback's target.
///
/// Threads: submitting tasks add messages (`withLock`, never waiting on the lock's condition); the driver thread
/// publishes (js_PublishMsgAsync may block while libnats flushes its buffer, so never on the cooperative pool);
/// libnats's reply thread delivers acknowledgements (`received`). Completions run where the last outcome of a
/// batch is recorded and must be short.
final class JetStreamPublisherCore: Sendable {
    struct State {
        var scheduler: JetStreamPublishScheduler
        var connected = true
        var stopping = false
        /// Whether a message was ever handed to libnats: its table of pending publishes exists only from then on.
        var everPublished = false
        var capacityWaiter: CheckedContinuation<Void, Never>?
        /// The JetStream context, set once by `attach` before the driver starts.
        var context: JetStreamHandle?
    }

    let lock: ConditionLock<State>
    private let ackTimeout: Int64

    init(settings: JetStreamPublisherSettings) {
        self.lock = ConditionLock(
            State(
                scheduler: JetStreamPublishScheduler(
                    limit: settings.maxOutstanding,
                    retryDelay: settings.retryDelay,
                    maxRetryDelay: settings.maxRetryDelay
                )
            )
        )
        self.ackTimeout = max(1, settings.ackTimeout.roundedUpMilliseconds)
    }

    /// Gives the core its JetStream context (made after the core, whose address is the callback's closure).
    func attach(_ context: JetStreamHandle) {
        lock.withLock { $0.context = context }
    }

    // MARK: - Driver thread

    private enum DriverStep {
        case publish(JetStreamHandle, [(slot: Int, message: JetStreamMessage)])
        case stop
    }

    /// The driver thread's loop: publish what is ready, sleep until more is ready, a retry is due or stop.
    func runDriver() {
        while true {
            let step: DriverStep = lock.wait { state in
                if state.stopping { return (.stop, nil) }
                // Publishes wait while the connection is down: libnats would only pile them into its buffer.
                guard state.connected, let context = state.context else { return (nil, nil) }
                let now = ContinuousClock.now
                let taken = state.scheduler.takeReady(now: now, maximum: 256)
                if !taken.isEmpty { return (.publish(context, taken), nil) }
                guard let due = state.scheduler.nextRetry else { return (nil, nil) }
                return (nil, max(.milliseconds(1), due - now))
            }
            guard case .publish(let context, let work) = step else { return }
            publish(work, context: context)
        }
    }

    private func publish(_ work: [(slot: Int, message: JetStreamMessage)], context: JetStreamHandle) {
        var failures: [(slot: Int, token: UInt?, error: NATSError)] = []
        // Messages are made first and registered under one lock, before any is handed over: an acknowledgement can
        // arrive on libnats's thread as soon as js_PublishMsgAsync returns.
        var made: [(slot: Int, message: JetStreamMessage, pointer: OpaquePointer)] = []
        made.reserveCapacity(work.count)
        for (slot, message) in work {
            var pointer: OpaquePointer?
            let status = message.payload.withUnsafeBytes { payload in
                natsMsg_Create(
                    &pointer,
                    message.subject,
                    nil,
                    payload.baseAddress?.assumingMemoryBound(to: CChar.self),
                    Int32(clamping: payload.count)
                )
            }
            if status == NATS_OK, let pointer {
                made.append((slot, message, pointer))
            } else {
                failures.append((slot, nil, NATSError.from(status: status, context: "subject \(message.subject)")))
            }
        }
        lock.withLock { state in
            for entry in made { state.scheduler.published(slot: entry.slot, token: UInt(bitPattern: entry.pointer)) }
            if !made.isEmpty { state.everPublished = true }
        }
        for entry in made {
            var options = jsPubOptions()
            jsPubOptions_Init(&options)
            options.MaxWait = ackTimeout  // the acknowledgement callback gets NATS_TIMEOUT after this long
            var pointer: OpaquePointer? = entry.pointer
            let status = entry.message.messageID.withCString { messageID in
                options.MsgId = messageID  // sets Nats-Msg-Id; libnats copies it into the message's headers
                return js_PublishMsgAsync(context.pointer, &pointer, &options)
            }
            // On success libnats took the message and cleared `pointer`; otherwise it is still ours to destroy.
            natsMsg_Destroy(pointer)
            if status != NATS_OK {
                let error = NATSError.from(status: status, context: "publish to \(entry.message.subject)")
                failures.append((entry.slot, UInt(bitPattern: entry.pointer), error))
            }
        }
        guard !failures.isEmpty else { return }
        let now = ContinuousClock.now
        let completions = lock.withLock { state in
            failures.compactMap {
                state.scheduler.publishFailed(slot: $0.slot, token: $0.token, error: $0.error, now: now)
            }
        }
        for completion in completions { completion.completion(completion.outcomes) }
    }

    // MARK: - Events from other threads

    /// An acknowledgement or error for the message `token` (libnats's reply thread).
    func received(token: UInt, _ outcome: JetStreamOutcome) {
        let (completion, waiter, wake) = lock.withLock { state in
            let retries = state.scheduler.retryCount
            let completion = state.scheduler.answered(token: token, outcome, now: .now)
            // The driver has work only when the key's next message became ready or a retry is to be timed; an
            // acknowledgement that releases nothing need not wake it (most of them, with many items in flight).
            let wake = state.scheduler.hasReady || state.scheduler.retryCount != retries
            return (completion, Self.takeWaiterIfRoom(&state), wake)
        }
        if wake { lock.signal() }
        waiter?.resume()
        completion.map { $0.completion($0.outcomes) }
    }

    /// The connection went away or came back (libnats's callback thread).
    func connectionChanged(to state: NATSConnectionState) {
        lock.withLock { $0.connected = state == .connected }
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

/// libnats's `jsPubAckHandler`: one call per published message, on libnats's reply thread. `closure` is the
/// publisher's core, passed unretained: the connection keeps it alive until libnats can no longer call here.
func jetStreamAcknowledged(
    _ context: OpaquePointer?,
    _ message: OpaquePointer?,
    _ ack: UnsafeMutablePointer<jsPubAck>?,
    _ failure: UnsafeMutablePointer<jsPubAckErr>?,
    _ closure: UnsafeMutableRawPointer?
) {
    guard let message else { return }
    // The handler owns the message (libnats's AckHandler contract): destroy it whatever happens below.
    defer { natsMsg_Destroy(message) }
    guard let closure else { return }
    let core = Unmanaged<JetStreamPublisherCore>.fromOpaque(closure).takeUnretainedValue()
    let outcome: JetStreamOutcome
    if let ack = ack?.pointee {
        // The stream name is the server's text: cleaned and bounded; the sequence is only stored, never computed on.
        let stream = PeerText.string(ack.Stream, maximumLength: 256)
        outcome = .acknowledged(JetStreamAck(stream: stream, sequence: ack.Sequence, duplicate: ack.Duplicate))
    } else if let failure = failure?.pointee {
        outcome = .failed(
            NATSError.from(
                status: failure.Err,
                jetStreamCode: Int(failure.ErrCode.rawValue),
                text: PeerText.string(failure.ErrText),
                context: "publish"
            )
        )
    } else {
        outcome = .failed(NATSError(kind: .retriable, message: "publish answered without an acknowledgement"))
    }
    core.received(token: UInt(bitPattern: message), outcome)
}
