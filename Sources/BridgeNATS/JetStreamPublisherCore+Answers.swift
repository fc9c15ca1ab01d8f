internal import BridgeSystem
internal import CNats

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The answers to a publisher's publishes, as they arrive on its reply subscription's delivery thread.
extension JetStreamPublisherCore {
    /// The answer to the publish `token` (the reply subscription's delivery thread), read from `reply`, which this
    /// takes over (kept until `spentRepliesKept` are, then destroyed with them).
    func received(token: UInt, _ outcome: JetStreamOutcome, reply: OpaquePointer) {
        var spent: [OpaquePointer] = []
        defer { for message in spent { natsMsg_Destroy(message) } }
        let (completion, waiter, drained, wake) = lock.withLock { state in
            state.spentReplies.append(reply)
            if state.spentReplies.count >= Self.spentRepliesKept {
                swap(&spent, &state.spentReplies)
                state.spentReplies.reserveCapacity(Self.spentRepliesKept)
            }
            let retries = state.scheduler.retryCount
            let completion = state.scheduler.answered(token: token, outcome, now: .now)
            // The driver has work only when the key's next message became ready or a retry is to be timed; an
            // acknowledgement that releases nothing need not wake it (most of them, with many items in flight).
            let wake = state.scheduler.hasReady || state.scheduler.retryCount != retries
            let drained = state.scheduler.heldCount == 0 ? state.drainedWaiter.take() : nil
            return (completion, Self.takeWaiterIfRoom(&state), drained, wake)
        }
        if wake { lock.signal() }
        waiter?.resume()
        drained?.resume()
        completion.map { $0.completion($0.outcomes) }
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
    // The handler owns the message: destroyed here unless the core takes it over.
    guard let closure, let subject = natsMsg_GetSubject(message) else {
        natsMsg_Destroy(message)
        return
    }
    let core = Unmanaged<JetStreamPublisherCore>.fromOpaque(closure).takeUnretainedValue()
    let token = core.replyPrefix.withUnsafeBytes { prefix in
        JetStreamReply.token(subject: UnsafeRawBufferPointer(start: subject, count: strlen(subject)), prefix: prefix)
    }
    guard let token else {  // not a reply to one of our publishes
        natsMsg_Destroy(message)
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
    core.received(token: token, outcome, reply: message)
}
