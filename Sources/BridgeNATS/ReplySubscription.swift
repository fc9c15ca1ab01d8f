internal import BridgeSystem
internal import CNats

/// A JetStream publisher's one subscription for the answers to its publishes: `<prefix>*`, where the prefix is a
/// unique inbox (`_INBOX.<NUID>.`) and the last token names the publish. Owns the `natsSubscription`.
///
/// libnats subscribes it again after a reconnect. Its queue of undelivered replies is bounded: replies beyond it
/// are dropped by libnats (a slow consumer), and their publishes time out and are published again.
final class ReplySubscription {
    private var pointer: OpaquePointer?

    private init(pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { close() }

    /// A new unique reply prefix, `_INBOX.<NUID>.`.
    static func uniquePrefix() throws(NATSError) -> String {
        var inbox: UnsafeMutablePointer<natsInbox>?
        let status = natsInbox_Create(&inbox)
        guard status == NATS_OK, let inbox else { throw NATSError.from(status: status, context: "reply inbox") }
        defer { natsInbox_Destroy(inbox) }
        return String(cString: inbox) + "."
    }

    /// Subscribes `core`'s reply prefix on `connection`; answers go to `core.received` on libnats's delivery
    /// thread of this subscription.
    static func subscribe(
        connection: NATSConnectionHandle,
        core: JetStreamPublisherCore,
        settings: JetStreamPublisherSettings
    ) throws(NATSError) -> ReplySubscription {
        var raw: OpaquePointer?
        let subject = String(decoding: core.replyPrefix, as: UTF8.self) + "*"
        let status = natsConnection_Subscribe(
            &raw,
            connection.pointer,
            subject,
            jetStreamReplied,
            Unmanaged.passUnretained(core).toOpaque()
        )
        guard status == NATS_OK, let raw else { throw NATSError.from(status: status, context: "reply subscription") }
        // Room for an answer to every publish that can be in flight (retries included), and then some.
        let messages = Int32(clamping: settings.maxOutstanding * 2 + 1024)
        natsSubscription_SetPendingLimits(raw, messages, 64 * 1024 * 1024)
        return ReplySubscription(pointer: raw)
    }

    /// Unsubscribes (no answer is delivered afterwards, but one being delivered may finish) and releases the
    /// subscription. Idempotent.
    func close() {
        guard let pointer else { return }
        self.pointer = nil
        _ = natsSubscription_Unsubscribe(pointer)
        natsSubscription_Destroy(pointer)
    }
}
