internal import BridgeSystem
internal import CMosquitto
import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// libmosquitto's network loop on a thread of the client's own (`DetachedThread.startJoinable`), which also makes
/// every publish: a batch crosses to it once, and no PUBLISH or PUBACK crosses threads.
///
/// With libmosquitto's own thread (`mosquitto_loop_start`), each publish queued a packet for that thread and woke it,
/// and each PUBACK was read there and handed back: thread switches at message rate, a tenth of the client's CPU
/// (BENCHMARKS.md, "MQTT: the publishing thread runs the loop"). Here the thread waits in `poll(2)` on the socket and
/// on `PollWakeup` (rung once per submitted batch), publishes what was submitted (libmosquitto writes each PUBLISH
/// at once when no other thread runs its loop), reads the acknowledgements (`MQTTCallbacks` run on this thread), and
/// runs libmosquitto's keep-alive. A lost connection is opened again with `Backoff` (1 s up to 30 s, jittered);
/// libmosquitto keeps unacknowledged QoS 1/2 messages and resends them after the CONNACK.
///
/// libmosquitto is called from one thread at a time: the client configures the handle before this thread starts,
/// which connects it; after `stop()` only this thread's last steps use it, and the handle is destroyed once neither the
/// client nor this loop holds it (`MosquittoHandle`).
final class MQTTNetworkLoop: Sendable {
    private struct Submission {
        var batch: Int
        var messages: [MQTTMessage]
    }

    private struct Inbox {
        var submissions: [Submission] = []
        var stopping = false
    }

    private let handle: MosquittoHandle
    private let core: MQTTClientCore
    private let settings: MQTTSettings
    private let qos: Int32
    private let protocolVersion: Int32
    private let wakeup: PollWakeup
    private let inbox = Mutex(Inbox())

    /// libmosquitto's keep-alive is checked at least this often (its own loop wakes every second for it too): it
    /// sends PINGREQ when due and notices a broker that stopped answering.
    private static let tickMilliseconds: Int32 = 1_000

    init(handle: MosquittoHandle, core: MQTTClientCore, settings: MQTTSettings, protocolVersion: Int32)
        throws(MQTTError)
    {
        self.handle = handle
        self.core = core
        self.settings = settings
        self.qos = Int32(settings.qos)
        self.protocolVersion = protocolVersion
        do {
            wakeup = try PollWakeup()
        } catch {
            throw MQTTError(kind: .retriable, message: "no wake-up for the network thread: \(error)")
        }
    }

    /// Hands `messages` (publish `batch`) to the loop's thread (any thread).
    func submit(batch: Int, messages: [MQTTMessage]) {
        inbox.withLock { $0.submissions.append(Submission(batch: batch, messages: messages)) }
        wakeup.ring()
    }

    /// Makes the loop send DISCONNECT and return (any thread; the caller then joins the thread).
    func stop() {
        inbox.withLock { $0.stopping = true }
        wakeup.ring()
    }

    // MARK: - The loop's thread

    /// The thread's body: the first connect, then the loop until `stop()`.
    ///
    /// The first connect is made here, not by the task that waits for its CONNACK: it blocks (TCP, the start of TLS,
    /// CONNECT; `mosquitto_connect_bind_v5` is the only call that sends CONNECT properties, the session expiry among
    /// them), for the kernel's SYN retries (about two minutes) when the broker's address drops SYNs. The task waits
    /// for the CONNACK until the connect timeout and no longer; a thread still inside the call is left to end by
    /// itself, as a close leaves it (`MQTTClient.shutDown`).
    func run() {
        let raw = handle.pointer
        do throws(MQTTError) {
            try MQTTClient.openConnection(handle, settings: settings, protocolVersion: protocolVersion)
        } catch {
            core.connectFailed(error: error)
            return
        }
        var backoff = Backoff(initialDelay: .seconds(1), maxDelay: .seconds(30))
        var opened = ContinuousClock.now
        var lost = false
        var descriptors = [pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0), pollfd()]
        while publishSubmitted() {
            let socket = mosquitto_socket(raw)
            if lost || socket < 0 {
                backoff.connectionEnded(after: ContinuousClock.now - opened)
                guard waitPublishing(until: ContinuousClock.now + backoff.nextDelay()) else { break }
                opened = .now
                // Without blocking: the TCP connect is started and the CONNECT queued; the loop completes the
                // connection when the socket becomes writable, and the CONNACK comes through it. A blocking
                // reconnect (libmosquitto's own thread's) sat in connect(2) for the kernel's SYN retries, about two
                // minutes, when the broker's address drops SYNs: the thread, its handle and the attempt outlived a
                // close that long. A connection that never completes is ended by libmosquitto's keep-alive. The
                // CONNECT carries the properties of the first connect (its session expiry) again.
                lost = mosquitto_reconnect_async(raw) != MOSQ_ERR_SUCCESS.rawValue
                continue
            }
            let events = Int16(POLLIN) | (mosquitto_want_write(raw) ? Int16(POLLOUT) : 0)
            descriptors[1] = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptors, 2, Self.tickMilliseconds)
            if ready > 0 && descriptors[0].revents != 0 { wakeup.drain() }
            lost = !service(raw, ready: ready > 0 ? descriptors[1].revents : 0)
        }
        // A normal DISCONNECT: the broker keeps the session. Written at once (nothing else runs the loop).
        _ = mosquitto_disconnect_v5(raw, 0, nil)
    }

    /// Reads and writes what the socket is `ready` for, then libmosquitto's keep-alive; false when the connection
    /// was lost (libmosquitto has called the disconnect callback and closed the socket).
    private func service(_ raw: OpaquePointer, ready: Int16) -> Bool {
        guard core.isConnected else {
            // Before the CONNACK: `mosquitto_loop` (here without waiting) knows the TLS handshake's steps, which
            // `mosquitto_loop_read`/`_write` alone would not take when the handshake wants to write.
            return mosquitto_loop(raw, 0, 1) == MOSQ_ERR_SUCCESS.rawValue
        }
        let success = MOSQ_ERR_SUCCESS.rawValue
        if ready & Int16(POLLIN | POLLERR | POLLHUP) != 0, mosquitto_loop_read(raw, 1) != success { return false }
        if ready & Int16(POLLOUT) != 0, mosquitto_socket(raw) >= 0, mosquitto_loop_write(raw, 1) != success {
            return false
        }
        return mosquitto_loop_misc(raw) == success
    }

    /// Waits until `deadline` (a reconnect's backoff), publishing what is submitted meanwhile (libmosquitto queues it
    /// for the next connection); false once stopped.
    private func waitPublishing(until deadline: ContinuousClock.Instant) -> Bool {
        while publishSubmitted() {
            guard ContinuousClock.now < deadline else { return true }
            switch try? Poll.wait(fd: wakeup.descriptor, for: .readable, until: deadline) {
            case true?: wakeup.drain()
            case false?: return true
            case nil: return true  // poll itself failed (not on a pipe it owns): reconnect rather than spin
            }
        }
        return false
    }

    /// Publishes every submitted batch; false once `stop()` was called.
    private func publishSubmitted() -> Bool {
        var submissions: [Submission] = []
        let stopping = inbox.withLock { inbox in
            swap(&submissions, &inbox.submissions)
            return inbox.stopping
        }
        if stopping { return false }
        for submission in submissions { publish(submission) }
        return true
    }

    /// Publishes one batch, each message's packet id (or failure) recorded in the core; a batch whose wait already
    /// ended (its timeout passed while this thread was reconnecting) is not sent.
    private func publish(_ submission: Submission) {
        guard core.isOpen(batch: submission.batch) else { return }
        let version5 = protocolVersion == MQTT_PROTOCOL_V5
        for (index, message) in submission.messages.enumerated() {
            do throws(MQTTError) {
                try MQTTTopic.validate(message.topic)
                var properties: OpaquePointer?
                defer { mosquitto_property_free_all(&properties) }
                if version5 {
                    for property in message.userProperties {
                        try MQTTClient.check(
                            mosquitto_property_add_string_pair(
                                &properties,
                                Int32(MQTT_PROP_USER_PROPERTY.rawValue),
                                property.name,
                                property.value
                            ),
                            "adding user property \(property.name)"
                        )
                    }
                }
                var mid: Int32 = 0
                let result = message.payload.withUnsafeBytes { payload in
                    mosquitto_publish_v5(
                        handle.pointer,
                        &mid,
                        message.topic,
                        Int32(clamping: payload.count),
                        payload.baseAddress,
                        qos,
                        message.retain,
                        properties
                    )
                }
                // Not connected: a QoS 1/2 message is queued all the same and sent after the reconnect.
                guard result == MOSQ_ERR_SUCCESS.rawValue || result == MOSQ_ERR_NO_CONN.rawValue else {
                    throw MQTTClient.error(result, errno: errno, context: "publishing to \(message.topic.prefix(80))")
                }
                core.sent(mid: mid, batch: submission.batch, index: index)
            } catch {
                core.failed(batch: submission.batch, index: index, error: error)
            }
        }
    }
}
