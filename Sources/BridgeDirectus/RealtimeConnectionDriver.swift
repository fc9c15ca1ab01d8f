package import BridgeEvents
package import BridgeJSON
package import BridgeSystem
package import BridgeWebSocket

/// Wakes the readers that follow socket events: the activity reader (for subscriptions in activity mode) and the
/// sort watcher (for every `update`, directus-protocol.md §14.3).
public protocol ActivityTrigger: Sendable {
    /// A change happened in `collection` on a subscription in activity mode (coalesced by the reader).
    func changeSeen(collection: String)
    /// An `update` event named `keys` (those that carried a usable key); `delivered` when the socket reader turned
    /// them into event lines itself (live mode).
    func updateSeen(collection: String, keys: [String], delivered: Bool)
    /// The socket (re)connected: whatever happened while it was down must be read as backfill.
    func socketReconnected()
}

extension ActivityTrigger {
    /// Most triggers have no use for the keys of updates.
    public func updateSeen(collection: String, keys: [String], delivered: Bool) {}
}

/// Runs one realtime connection on the calling (dedicated) thread until it ends.
///
/// It decodes every frame, feeds `RealtimeSessionStateMachine`, answers JSON pings at once, and turns subscription
/// events into event lines (live routes) or activity-reader wake-ups (trigger routes). Batches are *offered* to
/// every sink's inbox, never waited for: a slow sink cannot delay a pong (a full inbox drops for its sink and counts).
public final class RealtimeConnectionDriver {
    /// Why a connection ended.
    public enum End: Sendable, Equatable {
        /// Shutdown: unsubscribed and closed with 1000.
        case shutdown
        /// No traffic for the dead-connection interval.
        case heartbeatTimeout
        /// The socket `auth` was refused (AUTH_FAILED).
        case authenticationFailed(String)
        /// TOKEN_EXPIRED was not followed by a successful re-auth in time (AUTH_TIMEOUT).
        case authenticationTimedOut
        /// The server closed or the connection dropped (close code, reason).
        case closed(code: UInt16, reason: String)
        /// A WebSocket or I/O error.
        case failed(String)

        /// A short label for logs and the reconnect metric.
        public var label: String {
            switch self {
            case .shutdown: "shutdown"
            case .heartbeatTimeout: "heartbeat_timeout"
            case .authenticationFailed: "auth_failed"
            case .authenticationTimedOut: "auth_timeout"
            case .closed: "closed"
            case .failed: "error"
            }
        }
    }

    private let connection: WebSocketConnection
    private let routes: [SubscriptionRoute]
    /// What `deliver` reads of each route, per event: one reference instead of a copy of the whole route (its six
    /// fields retained and released for every event), and the events it passes as bits instead of a hashed `Set`.
    private let deliveryRoutes: [DeliveryRoute]
    private var machine: RealtimeSessionStateMachine
    private let sinks: any EventIntake
    private let tokenBox: TokenBox
    private let stop: ShutdownSignal
    /// Wakes the activity reader and the sort watcher (nil when nothing follows socket events).
    let trigger: (any ActivityTrigger)?
    private let health: HealthState
    private let metrics: PipelineMetrics
    /// Where the reader's warnings go.
    let logger: Logger
    private var idGenerator = UUIDv7Generator()
    private var pending: [EncodedEvent] = []
    /// The scratch buffers a read's lines are written into (see `ReadEvents`), kept for their capacity.
    private var lines: [UInt8] = []
    private var lineEnds: [Int] = []
    /// The events of the last read, reserved for the next.
    private var eventsPerRead = 1
    /// The connection's count of messages skipped for their size, as last handed to the state machine.
    private var oversizedSeen = 0
    /// Whether socket events become event lines (live mode), so a message read past loses events.
    private let emitsEvents: Bool
    static let lostMessageReason =
        "a WebSocket message from Directus over the size limit was read past: its events were not parsed, "
        + "and count as one"

    /// Prepares a driver for an open connection.
    package init(
        connection: WebSocketConnection,
        routes: [SubscriptionRoute],
        authMode: RealtimeSessionStateMachine.AuthMode,
        heartbeat: Duration,
        deadAfter: Duration? = nil,
        resubscribeInterval: Duration = .seconds(30),
        sinks: any EventIntake,
        tokenBox: TokenBox,
        stop: ShutdownSignal,
        trigger: (any ActivityTrigger)?,
        health: HealthState,
        metrics: PipelineMetrics,
        logger: Logger
    ) {
        self.connection = connection
        self.routes = routes
        self.deliveryRoutes = routes.map(DeliveryRoute.init)
        self.emitsEvents = routes.contains { $0.handling == .emit }
        self.machine = RealtimeSessionStateMachine(
            subscriptions: routes.map {
                .init(uid: $0.uid, collection: $0.collection, subscribeMessage: $0.subscribeMessage)
            },
            authMode: authMode,
            heartbeat: heartbeat,
            deadAfter: deadAfter,
            unsubscribeTimeout: .seconds(2),
            resubscribeInterval: resubscribeInterval,
            now: .now
        )
        self.sinks = sinks
        self.tokenBox = tokenBox
        self.stop = stop
        self.trigger = trigger
        self.health = health
        self.metrics = metrics
        self.logger = logger
    }

    /// Runs the connection to its end. Blocks the calling thread.
    public func run() -> End {
        let token = tokenBox.current
        var sentTokenVersion = token.version
        var shutdownSent = false
        var end: End?
        do {
            end = try perform(machine.connected(accessToken: token.token, now: .now))
            while end == nil {
                if !shutdownSent && stop.isTriggered {
                    shutdownSent = true
                    end = try perform(machine.shutdownRequested(now: .now))
                    if end != nil { break }
                }
                let latest = tokenBox.current
                if latest.version != sentTokenVersion, let newToken = latest.token {
                    sentTokenVersion = latest.version
                    end = try perform(machine.tokenRefreshed(accessToken: newToken))
                    if end != nil { break }
                }
                let now = ContinuousClock.now
                let wait = max(.zero, min(machine.nextDeadline() - now, .milliseconds(250)))
                end = try receive(timeout: wait)
                flushPending()
                if end == nil { end = try perform(machine.tick(now: .now)) }
            }
        } catch let error as WebSocketError {
            end = Self.end(for: error)
        } catch {
            end = .failed("\(error)")
        }
        flushPending()
        let result = end ?? .failed("connection ended")
        finish(result)
        return result
    }

    // MARK: - Frames

    /// One receive. Subscription events, nearly every frame, are decoded and turned into event lines where they lie
    /// in the connection's read buffer (no copy of the frame). Any other message ends the receive and goes through
    /// the state machine after it, outside the reader lock: its actions may send, close or end the connection.
    private func receive(timeout: Duration) throws -> End? {
        var other: RealtimeInbound?
        // One read's messages arrived together: one wall-clock and one monotonic reading for all of them, taken at
        // the first. Not kept together in an optional struct: `ContinuousClock.Instant` is a resilient type, so such
        // a struct is copied through value witnesses, which cost more per message than the payload copy saved.
        var receivedAt: Timestamp?
        var now = ContinuousClock.now
        do {
            // The read's events and the id generator as locals: as stored properties of this class, every event's
            // append and id paid a dynamic exclusivity check (`swift_beginAccess`, 3 % of the reader thread in perf
            // record).
            var read = ReadEvents(events: pending, ids: idGenerator, lines: lines, lineEnds: lineEnds)
            pending = []
            lines = []
            lineEnds = []
            defer {
                read.sealLines()
                pending = read.events
                idGenerator = read.ids
                lines = read.lines
                lineEnds = read.lineEnds
            }
            // Text is lent before the connection checks its UTF-8: the decoder's strict JSON checks it
            // (`handleInPlace`), one pass over each frame fewer.
            _ = try connection.receive(timeout: timeout, maxMessages: 512) {
                (message) throws(WebSocketProtocolError) in
                let readAt: Timestamp
                if let known = receivedAt {
                    readAt = known
                } else {
                    readAt = .now()
                    receivedAt = readAt
                    now = .now
                    // About one event per message, as many as the last read had (the read's size is not known).
                    if read.events.isEmpty { read.events.reserveCapacity(eventsPerRead) }
                }
                other = try handleInPlace(message, receivedAt: readAt, now: now, into: &read)
                return other == nil
            }
            if receivedAt != nil { eventsPerRead = max(1, read.events.count) }
        }
        let oversized = connection.skippedMessages
        while oversizedSeen < oversized {
            // One at a time: each may be the `init` of the subscribe in flight, then of the next one.
            oversizedSeen += 1
            if let end = try perform(machine.received(.oversized, now: now)) { return end }
        }
        guard let other else { return nil }
        return try perform(machine.received(other, now: now))
    }

    /// Delivers a subscription event from its bytes in place; returns any other message's input for the state
    /// machine (nil for an event, or for a frame that is not a Directus message: logged and skipped).
    ///
    /// Every text frame is decoded here, and its UTF-8 is checked here, not by the connection: a frame the decoder
    /// accepts is UTF-8 (see `DirectusServerMessage.init(decoding:)`); one it refuses is checked whole, and throws
    /// `.invalidUTF8` (the connection fails with 1007) when it is not UTF-8.
    private func handleInPlace(
        _ message: BorrowedMessage,
        receivedAt: Timestamp,
        now: ContinuousClock.Instant,
        into read: inout ReadEvents
    ) throws(WebSocketProtocolError) -> RealtimeInbound? {
        guard message.isText else { return .ignored(type: "binary") }
        let decoded: DirectusServerMessage
        var firstItemMember: JSONFirstMember?
        do {
            decoded = try DirectusServerMessage(decoding: message.bytes, firstItemMember: &firstItemMember)
        } catch {
            // The decoder stops at the first fault, which may lie before a byte that is not UTF-8.
            guard UTF8Validator.isValid(message.bytes) else { throw .invalidUTF8 }
            // A frame that is not a Directus message loses nothing; keep the subscription (and its events).
            logger.warning("ignored an unreadable message from Directus", metadata: [LogKey.error: "\(error)"])
            return nil
        }
        let inbound = Self.inbound(decoded)
        guard case .subscriptionEvent(let uid, let event) = inbound else { return inbound }
        // Without the action array of `received`: one call per event.
        if let index = machine.receivedEvent(uid: uid, now: now) {
            deliver(
                decoded,
                firstItemMember: firstItemMember,
                bytes: message.bytes,
                route: deliveryRoutes[index],
                event: event,
                receivedAt: receivedAt,
                into: &read
            )
        }
        return nil
    }

    /// Maps a decoded message to the state machine's input (§3, §5.3, §7.2).
    package static func inbound(_ message: DirectusServerMessage) -> RealtimeInbound {
        // Directus's words, bounded here (a message may be as large as the socket allows); logs clean them. Computed
        // only for the errors that carry them, not for every event.
        var code: String {
            PeerText.prefix(message.error?.code ?? "UNKNOWN", maximumLength: DirectusError.maximumCodeLength)
        }
        var text: String {
            PeerText.prefix(message.error?.message ?? "", maximumLength: DirectusError.maximumMessageLength)
        }
        switch message.type {
        case .ping: return .ping
        case .pong: return .pong
        case .auth:
            return message.status == .error ? .authError(code: code, message: text) : .authOK
        case .subscription:
            switch message.event {
            case .initial: return .subscriptionInit(uid: message.uid)
            case .create: return .subscriptionEvent(uid: message.uid, event: .create)
            case .update: return .subscriptionEvent(uid: message.uid, event: .update)
            case .delete: return .subscriptionEvent(uid: message.uid, event: .delete)
            case .unsubscribe: return .unsubscribed(uid: message.uid)
            default: return .ignored(type: "subscription")
            }
        case .subscribe where message.status == .error:
            return .subscribeError(code: code, message: text, uid: message.uid)
        default:
            if message.status == .error {
                return .otherError(type: message.type.rawValue, code: code, message: text)
            }
            return .ignored(type: message.type.rawValue)
        }
    }

    private func flushPending() {
        guard !pending.isEmpty else { return }
        let batch = EventBatch(events: pending, mayDrop: true)
        metrics.received(pending)
        sinks.offer(batch)
        // Not `removeAll(keepingCapacity:)`: the batch shares the array, so that would allocate one as large as
        // the largest frame's for every later frame (memory the queues' byte limit does not see).
        pending = []
    }

    // MARK: - Actions

    /// A live event item without a usable primary key (a broken or hostile peer: Directus always sends it) cannot be
    /// a line: it is lost for every sink, so it is counted and logged at error level as every dropped live event is
    /// (contract, "The delivery guarantee, per mode"). Before it was a warning alone.
    func lostItemWithoutKey(_ route: DeliveryRoute) {
        logger.error(
            "event item without a usable primary key skipped; its event is lost for every sink",
            metadata: [LogKey.collection: route.collection, "primary_key": route.primaryKey]
        )
        metrics.droppedWithoutKey(1)
        sinks.lost(1, reason: "an event item from Directus without a usable primary key")
    }

    private func perform(_ actions: [RealtimeSessionStateMachine.Action]) throws -> End? {
        for action in actions {
            switch action {
            case .send(let text):
                try connection.send(text: text)
            case .subscriptionLive(let index):
                let route = routes[index]
                health.update { $0.liveSubscriptions.insert(route.uid) }
                logger.info(
                    "subscribed",
                    metadata: [LogKey.subscriptionUID: route.uid, LogKey.collection: route.collection]
                )
            case .subscriptionFailed(let index, let code, let message):
                let route = routes[index]
                logger.error(
                    Self.advice(code: code, collection: route.collection),
                    metadata: [
                        LogKey.subscriptionUID: route.uid, LogKey.collection: route.collection,
                        LogKey.errorCode: code, LogKey.error: message,
                    ]
                )
            case .deliverEvent:
                break  // events are delivered with the frame's bytes in `handleInPlace`
            case .messageLost:
                // Live mode lost what it carried, for every sink: counted where an operator's alert on drops looks
                // (the connection logged the skip). Activity mode reads the changes from the log: nothing lost.
                if emitsEvents {
                    metrics.droppedTooLarge(1)
                    sinks.lost(1, reason: Self.lostMessageReason)
                }
            case .established:
                health.update { $0.connected = true }
                trigger?.socketReconnected()
                logger.info("connected", metadata: ["subscriptions.live": machine.liveSubscriptions.count])
            case .refreshTokenNow:
                logger.info("access token expired on the socket, renewing")
                tokenBox.requestRenewal()
            case .reauthenticated:
                logger.debug("socket re-authenticated with the renewed token")
            case .logUnexpected(let type, let code, let message):
                logger.warning(
                    "Directus reported an error",
                    metadata: ["type": type, LogKey.errorCode: code, LogKey.error: message]
                )
            case .close(let reason):
                return close(for: reason)
            }
        }
        return nil
    }

    private func close(for reason: RealtimeSessionStateMachine.CloseReason) -> End {
        switch reason {
        case .shutdown:
            _ = connection.close(code: 1000, reason: "")
            return .shutdown
        case .shutdownUnanswered:
            // Waiting `closeTimeout` (5 s) for a close answer on top of the 2 s unsubscribe wait took SIGTERM past a
            // 5 s `shutdown_timeout` against an endless message (docs/RELIABILITY.md, "Wire numbers and traps: audit").
            connection.abort()
            return .shutdown
        case .heartbeatTimeout:
            connection.abort()
            return .heartbeatTimeout
        case .authenticationFailed(let message):
            connection.abort()
            return .authenticationFailed(message)
        case .authenticationTimedOut:
            connection.abort()
            return .authenticationTimedOut
        }
    }

    private func finish(_ end: End) {
        health.update {
            $0.connected = false
            $0.liveSubscriptions = []
        }
        if end != .shutdown { connection.abort() }
    }

    package static func end(for error: WebSocketError) -> End {
        if error.kind == .closed {
            return .closed(code: error.closeCode ?? 1006, reason: error.closeReason ?? "")
        }
        return .failed(error.description)
    }

    /// What a person should do about a refused subscription.
    package static func advice(code: String, collection: String) -> String {
        switch code {
        case "INVALID_COLLECTION":
            "subscription refused: collection \"\(collection)\" does not exist or is not accessible; check the name"
        case "FORBIDDEN":
            "subscription refused: the bridge's user may not read \"\(collection)\" or the configured fields; grant read permission"
        case "INVALID_QUERY":
            "subscription refused: Directus rejected the query; fix subscriptions[].query for \"\(collection)\""
        default:
            "subscription refused for \"\(collection)\""
        }
    }
}
