internal import BridgeSystem
internal import CRabbitMQ

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// One AMQP connection with one channel in confirm mode, owning librabbitmq's `amqp_connection_state_t`.
/// Blocking: run it on a thread of its own (`AMQPClient` does). Not Sendable: librabbitmq's connections are not
/// thread-safe, one thread at a time.
///
/// Why librabbitmq and not a client of our own (docs/ARCHITECTURE.md, "Broker clients"): AMQP 0-9-1 is a large
/// binary protocol (the connection handshake, SASL, frame assembly, field tables, heartbeats); librabbitmq is the
/// C client RabbitMQ's team kept for a decade, packaged by Debian, and the bridge needs only its publishing path,
/// which is small enough to drive from one thread without callbacks. What it lacks the bridge adds here: the
/// publisher-confirm bookkeeping (tags, returns, nacks), bounds on everything read from a frame (`camqp_*` in the
/// shim), and the mapping to typed errors.
final class AMQPConnection {
    private let connection: amqp_connection_state_t
    private let settings: AMQPSettings
    private let channel: amqp_channel_t = 1
    /// The delivery tag the broker gives the next publish on the channel (confirm mode counts from 1).
    private var nextTag: UInt64 = 1
    /// Set after a failure: the tags on the wire can no longer be matched, so it is never used again.
    private(set) var isBroken = false
    private var isClosed = false  // by `close()`: the connection is destroyed
    /// What the broker holds back: after its `connection.blocked` (a memory or disk alarm), or while it is silent.
    private var block = AMQPBlock()

    /// Whether the broker blocks this connection, or publishes given up on are unanswered: replacing it would send
    /// them again while the broker still holds the first copies.
    var isHeld: Bool { block.isHolding }

    /// Whether a confirm timeout keeps the connection instead of breaking it. A broker that stops answering (a hung
    /// process, a stalled disk) still has the publishes in its socket and stores them when it runs again: given up on
    /// and sent again on a new connection, each would be stored twice (a SIGSTOPped RabbitMQ for 25 s: 10 of 10 twice,
    /// `AMQPSinkTests.aHungBrokerGetsEachEventOnce`). With heartbeats, librabbitmq declares a connection dead after two
    /// missed ones (`AMQP_STATUS_HEARTBEAT_TIMEOUT`, a failure that breaks it), so a dead peer is still replaced;
    /// without them nothing could tell it from a silent broker, and a timeout breaks the connection as before.
    private var holdsOnSilence: Bool { settings.heartbeat > .zero }

    private init(connection: amqp_connection_state_t, settings: AMQPSettings) {
        self.connection = connection
        self.settings = settings
    }

    /// Dropped without `close()`: the close (each step waits for the broker's answer) and the destroy go to
    /// `BlockingExecutor.shared`, as `AMQPClient.close()`'s do, not to the dropping thread, often a cooperative one.
    deinit {
        guard !isClosed else { return }
        let (connection, channel, polite) = (connection, channel, !isBroken && !block.isHolding)
        BlockingExecutor.shared.submit { Self.close(connection, channel: channel, polite: polite) }
    }

    /// Closes the channel and the connection, each waiting for the broker's answer, and destroys the connection
    /// (blocking: on the connection's thread, or the blocking executor). Once only.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        // A blocked broker reads nothing, the close's answer included: closing it politely would wait in vain.
        Self.close(connection, channel: channel, polite: !isBroken && !block.isHolding)
    }

    private static func close(_ connection: amqp_connection_state_t, channel: amqp_channel_t, polite: Bool) {
        if polite {
            _ = amqp_channel_close(connection, channel, AMQP_REPLY_SUCCESS)
            _ = amqp_connection_close(connection, AMQP_REPLY_SUCCESS)
        }
        amqp_destroy_connection(connection)  // also closes and frees the socket
    }

    /// Connects, logs in, opens the channel and turns publisher confirms on.
    static func open(settings: AMQPSettings) throws(AMQPError) -> AMQPConnection {
        guard let raw = amqp_new_connection() else {
            throw AMQPError(kind: .retriable, message: "librabbitmq could not allocate a connection")
        }
        let connection = AMQPConnection(connection: raw, settings: settings)  // destroys raw on every throw below
        connection.isBroken = true  // until the handshake is through: nothing to close politely
        let socket: OpaquePointer?
        if settings.usesTLS {
            socket = amqp_ssl_socket_new(raw)
            if let socket {
                amqp_ssl_socket_set_verify_peer(socket, 1)
                amqp_ssl_socket_set_verify_hostname(socket, 1)
                // librabbitmq's context trusts only what it is given: the CA file, else the system bundle.
                let trusted = settings.caFile.flatMap { $0.isEmpty ? nil : $0 } ?? "/etc/ssl/certs/ca-certificates.crt"
                guard amqp_ssl_socket_set_cacert(socket, trusted) == AMQP_STATUS_OK.rawValue else {
                    throw AMQPError(kind: .configuration, message: "cannot load the CA file \(trusted)")
                }
            }
        } else {
            socket = amqp_tcp_socket_new(raw)
        }
        guard let socket else { throw AMQPError(kind: .retriable, message: "librabbitmq could not make a socket") }
        let timeout = Int32(
            clamping: max(
                1,
                settings.connectTimeout.components.seconds * 1_000
                    + settings.connectTimeout.components.attoseconds / 1_000_000_000_000_000
            )
        )
        let opened = camqp_open(raw, socket, settings.url.host, Int32(settings.url.port), timeout)
        guard opened == AMQP_STATUS_OK.rawValue else {
            let kind: AMQPError.Kind =
                opened == AMQP_STATUS_SSL_CONNECTION_FAILED.rawValue
                    || opened == AMQP_STATUS_SSL_PEER_VERIFY_FAILED.rawValue
                    || opened == AMQP_STATUS_SSL_HOSTNAME_VERIFY_FAILED.rawValue ? .authentication : .retriable
            throw AMQPError(kind: kind, message: "cannot connect to \(settings.url): \(statusText(opened))")
        }
        let heartbeat = Int32(clamping: settings.heartbeat.components.seconds)
        try connection.check(
            camqp_login_plain(raw, settings.vhost, heartbeat, settings.user, settings.password),
            "logging in to \(settings.url)",
            loginFailure: true
        )
        _ = amqp_channel_open(raw, 1)
        try connection.check(amqp_get_rpc_reply(raw), "opening a channel")
        _ = amqp_confirm_select(raw, 1)
        try connection.check(amqp_get_rpc_reply(raw), "turning publisher confirms on")
        connection.isBroken = false
        return connection
    }

    private func check(_ reply: amqp_rpc_reply_t, _ context: String, loginFailure: Bool = false) throws(AMQPError) {
        var code: Int32 = 0
        var text = [CChar](repeating: 0, count: 256)
        let failed = camqp_reply_failure(reply, &code, &text, text.count)
        guard failed != 0 else { return }
        let message = PeerText.string(text)
        // RabbitMQ closes the socket on bad credentials before it says why: a login that ends that way is refused.
        if loginFailure && (failed == 2 && code == AMQP_STATUS_CONNECTION_CLOSED.rawValue || code == 403) {
            throw AMQPError(
                kind: .authentication,
                message: "\(context): the broker refused the credentials (\(message))"
            )
        }
        if failed == 3 { throw AMQPError.fromReply(code: Int(code), text: message, context: context) }
        throw AMQPError(kind: .retriable, message: "\(context): \(message)")
    }

    /// Asks the broker whether `exchange` exists (`exchange.declare`, passive: nothing is created). The broker
    /// answers a missing one (404) or one the user may not see (403) by closing the channel: the connection is
    /// then broken and never used again.
    func checkExchange(_ exchange: String) throws(AMQPError) {
        guard !isBroken else {
            throw AMQPError(kind: .retriable, message: "the connection to \(settings.url) broke")
        }
        let name = Array(exchange.utf8)
        name.withUnsafeBytes { raw in
            _ = amqp_exchange_declare(
                connection,
                channel,
                amqp_bytes_t(len: raw.count, bytes: UnsafeMutableRawPointer(mutating: raw.baseAddress)),
                amqp_bytes_t(len: 0, bytes: nil),
                1,  // passive
                0,
                0,
                0,
                amqp_table_t(num_entries: 0, entries: nil)
            )
        }
        do {
            try check(amqp_get_rpc_reply(connection), "looking up exchange \"\(exchange)\"")
        } catch {
            isBroken = true
            throw error
        }
    }

    // MARK: - Publishing

    /// Publishes `messages` (at most `maxInFlight` unconfirmed at once) and waits until each is confirmed,
    /// returned or nacked, or `timeout` passes since the last answer; one outcome per message, in order. A failure
    /// of the connection or channel breaks it: what is unanswered then fails, retriable unless the broker named a
    /// reason retrying cannot fix (an exchange that does not exist, access refused). While the broker blocks the
    /// connection (`AMQPBlock`), a timeout fails what is unanswered without breaking it, and nothing new is sent
    /// until the broker answered those: they fail again, retriable, unsent.
    func publish(_ messages: [AMQPMessage], timeout: Duration, isCancelled: () -> Bool) -> [AMQPOutcome] {
        var outcomes = [AMQPOutcome?](repeating: nil, count: messages.count)
        var pending: [UInt64: Int] = [:]
        var returned: [Int: String] = [:]
        var failure: AMQPError?
        var lastAnswer = ContinuousClock.now

        func resolve(_ tag: UInt64, _ outcome: (Int) -> AMQPOutcome) {
            guard let index = pending.removeValue(forKey: tag) else { return }
            outcomes[index] = outcome(index)
        }
        func pump() {
            var event = camqp_event()
            camqp_next_event(connection, channel, 250, &event)
            switch event.kind {
            case CAMQP_EVENT_NONE, CAMQP_EVENT_OTHER:
                return
            case CAMQP_EVENT_BLOCKED:
                block.reason = PeerText.sanitized(
                    withUnsafeBytes(of: event.text) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                )
            case CAMQP_EVENT_UNBLOCKED:
                block.reason = nil
                lastAnswer = .now  // the broker reads what waited only now: its confirms are due from here
            case CAMQP_EVENT_ACK, CAMQP_EVENT_NACK:
                lastAnswer = .now
                let nacked = event.kind == CAMQP_EVENT_NACK
                block.answered(event.tag, multiple: event.multiple != 0, nacked: nacked)
                let tags = event.multiple != 0 ? pending.keys.filter { $0 <= event.tag } : [event.tag]
                for tag in tags {
                    resolve(tag) { index in
                        if nacked {
                            return .failed(AMQPError(kind: .retriable, message: "the broker nacked the message"))
                        }
                        return returned[index].map { .returned($0) } ?? .confirmed
                    }
                }
            case CAMQP_EVENT_RETURN:
                lastAnswer = .now
                let messageID = withUnsafeBytes(of: event.text) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                let reason = "unroutable: no queue is bound for it (\(event.code))"
                // The oldest unanswered publish with that id (the return comes before its ack).
                if let index = pending.values.sorted().first(where: {
                    messages[$0].messageID == messageID && returned[$0] == nil
                }) {
                    returned[index] = reason
                } else {
                    block.returned(messageID: messageID)
                }
            case CAMQP_EVENT_CHANNEL_CLOSED, CAMQP_EVENT_CONNECTION_CLOSED:
                let text = withUnsafeBytes(of: event.text) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                failure = AMQPError.fromReply(
                    code: Int(event.code),
                    text: PeerText.sanitized(text),
                    context: event.kind == CAMQP_EVENT_CHANNEL_CLOSED
                        ? "the broker closed the channel"
                        : "the broker closed the connection"
                )
            default:
                failure = AMQPError(
                    kind: .retriable,
                    message: "the connection to \(settings.url) failed: \(Self.statusText(Int32(event.code)))"
                )
            }
        }

        guard !isBroken else {
            let error = AMQPError(kind: .retriable, message: "the connection to \(settings.url) broke")
            return messages.map { _ in .failed(error) }
        }
        // What the broker held before: wait for its answers first, and send nothing while it still blocks.
        while block.isHolding && failure == nil && !isCancelled() && ContinuousClock.now - lastAnswer <= timeout {
            pump()
        }
        if block.isHolding && failure == nil {
            guard block.reason == nil && !holdsOnSilence else {
                let error = block.error(url: settings.url, timeout: timeout)
                return messages.map { _ in .failed(error) }
            }
            // No heartbeat to tell a dead connection from a silent broker: as for any missing confirm, a new one.
            failure = AMQPError(
                kind: .retriable,
                message: "no publisher confirm from \(settings.url) within \(timeout)"
            )
        }
        for (index, message) in messages.enumerated() where failure == nil {
            // Confirmed after an earlier call gave up on it: stored once already.
            if block.takeConfirmed(message.messageID) {
                outcomes[index] = .confirmed
                continue
            }
            while pending.count >= settings.maxInFlight && failure == nil && !isCancelled() { pump() }
            guard failure == nil else { break }
            let status = Self.send(message, on: connection, channel: channel)
            guard status == AMQP_STATUS_OK.rawValue else {
                failure = AMQPError(
                    kind: .retriable,
                    message: "publishing to \(settings.url) failed: \(Self.statusText(status))"
                )
                break
            }
            pending[nextTag] = index
            nextTag += 1
        }
        while !pending.isEmpty && failure == nil {
            if isCancelled() || ContinuousClock.now - lastAnswer > timeout {
                if block.reason != nil || holdsOnSilence {
                    // Blocked, or silent on a connection its heartbeat has not declared dead: the messages are the
                    // broker's to store once it reads them; keep the connection (`AMQPBlock`).
                    block.giveUp(pending.map { ($0.key, messages[$0.value].messageID, returned[$0.value] != nil) })
                    let error = block.error(url: settings.url, timeout: timeout)
                    return outcomes.map { $0 ?? .failed(error) }
                }
                failure = AMQPError(
                    kind: .retriable,
                    message: "no publisher confirm from \(settings.url) within \(timeout)"
                )
                break
            }
            pump()
        }
        if let failure {
            isBroken = true
            return outcomes.map { $0 ?? .failed(failure) }
        }
        return outcomes.map { $0! }
    }
}
