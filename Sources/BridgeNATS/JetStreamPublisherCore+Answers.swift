internal import BridgeSystem
internal import CNats

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The answers to a publisher's publishes, as they arrive on its reply subscription's delivery thread.
extension JetStreamPublisherCore {
    /// The answer to the publish `token` (the reply subscription's delivery thread). `moreQueued`: libnats holds more
    /// messages of the subscription, delivered right after this one.
    ///
    /// What the answer released (its key's next message) is published here once no answer is queued: one publish
    /// round per run of answers read together, with no hand-over to the driver and no wake-up of it (with many
    /// items in flight nearly every answer releases one; BENCHMARKS.md, "Issue 26, item 6: the JetStream scheduler
    /// in slots, and released messages published by the reply thread").
    func received(token: UInt, _ outcome: JetStreamOutcome, moreQueued: Bool) {
        let (completion, waiter, drained, work, wake) = lock.withLock { state in
            let retries = state.scheduler.retryCount
            let now = ContinuousClock.now
            let completion = state.scheduler.answered(token: token, outcome, now: now)
            let (work, wakeForDeadlines) = moreQueued ? ([], false) : Self.takeWorkHere(&state, now: now)
            // The driver times retries: one it did not know of must wake it.
            let wake = wakeForDeadlines || state.scheduler.retryCount != retries
            let drained = state.scheduler.heldCount == 0 ? state.drainedWaiter.take() : nil
            return (completion, Self.takeWaiterIfRoom(&state), drained, work, wake)
        }
        if wake { lock.signal() }
        waiter?.resume()
        if !work.isEmpty { publish(work) }
        drained?.resume()
        completion.map { $0.completion($0.outcomes) }
    }

    /// A message that is no answer of ours came last of its run (the reply subscription's delivery thread): what
    /// earlier answers released is published now, as `received` would have.
    func receivedOther() {
        let (work, wake) = lock.withLock { Self.takeWorkHere(&$0, now: .now) }
        if wake { lock.signal() }
        if !work.isEmpty { publish(work) }
    }
}

/// libnats's message handler of a publisher's reply subscription: one call per reply, on the subscription's
/// delivery thread. `closure` is the publisher's core, passed unretained: the connection keeps it alive until
/// libnats can no longer call here.
func jetStreamReplied(
    _ connection: OpaquePointer?,
    _ subscription: OpaquePointer?,
    _ message: OpaquePointer?,
    _ closure: UnsafeMutableRawPointer?
) {
    guard let message else { return }
    // The handler owns the message: freed here once read, without libnats's collector (`cnats_freeMessage`).
    guard let closure else {
        cnats_freeMessage(message)
        return
    }
    let core = Unmanaged<JetStreamPublisherCore>.fromOpaque(closure).takeUnretainedValue()
    // libnats counts a message out of the subscription's queue before it calls here: what is left comes next.
    var queued: Int32 = 0
    let moreQueued = natsSubscription_GetPending(subscription, &queued, nil) == NATS_OK && queued > 0
    let token = natsMsg_GetSubject(message).flatMap { subject in
        core.replyPrefix.withUnsafeBytes { prefix in
            JetStreamReply.token(
                subject: UnsafeRawBufferPointer(start: subject, count: strlen(subject)),
                prefix: prefix
            )
        }
    }
    guard let token else {  // not a reply to one of our publishes
        cnats_freeMessage(message)
        if !moreQueued { core.receivedOther() }
        return
    }
    let outcome: JetStreamOutcome
    if natsMsg_IsNoResponders(message) {
        outcome = JetStreamReply.noResponders
    } else {
        let length = max(0, Int(natsMsg_GetDataLength(message)))
        outcome = JetStreamReply.outcome(
            payload: UnsafeRawBufferPointer(start: natsMsg_GetData(message), count: length)
        )
    }
    cnats_freeMessage(message)  // the outcome holds copies of what it read
    core.received(token: token, outcome, moreQueued: moreQueued)
}
