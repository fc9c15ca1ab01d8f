public import BridgeJSON
public import BridgeSystem
public import BridgeWebSocket
package import BridgeEvents

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
    private let trigger: (any ActivityTrigger)?
    private let health: HealthState
    private let metrics: PipelineMetrics
    private let logger: Logger
    private var idGenerator = UUIDv7Generator()
    private var pending: [EncodedEvent] = []

    /// Prepares a driver for an open connection.
    package init(
        connection: WebSocketConnection, routes: [SubscriptionRoute], authMode: RealtimeSessionStateMachine.AuthMode,
        heartbeat: Duration, deadAfter: Duration? = nil, resubscribeInterval: Duration = .seconds(30), sinks: any EventIntake,
        tokenBox: TokenBox, stop: ShutdownSignal,
        trigger: (any ActivityTrigger)?, health: HealthState, metrics: PipelineMetrics, logger: Logger
    ) {
        self.connection = connection
        self.routes = routes
        self.deliveryRoutes = routes.map(DeliveryRoute.init)
        self.machine = RealtimeSessionStateMachine(
            subscriptions: routes.map {
                .init(uid: $0.uid, collection: $0.collection, subscribeMessage: $0.subscribeMessage)
            },
            authMode: authMode, heartbeat: heartbeat, deadAfter: deadAfter, unsubscribeTimeout: .seconds(2),
            resubscribeInterval: resubscribeInterval, now: .now)
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
                let messages = try connection.receiveBatch(timeout: wait, maxMessages: 512)
                if !messages.isEmpty { end = try handle(messages) }
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

    private func handle(_ messages: [WebSocketMessage]) throws -> End? {
        // One read's messages arrived together: one wall-clock and one monotonic reading for all of them.
        let receivedAt = Timestamp.now()
        let now = ContinuousClock.now
        // The read's events and the id generator as locals: as stored properties of this class, every event's append
        // and id paid a dynamic exclusivity check (`swift_beginAccess`, 3 % of the reader thread in perf record).
        var read = ReadEvents(events: pending, ids: idGenerator)
        pending = []
        defer {
            pending = read.events
            idGenerator = read.ids
        }
        if read.events.isEmpty { read.events.reserveCapacity(messages.count) }  // one event per message, mostly
        for message in messages {
            guard case .text(let bytes) = message else {
                if let end = try perform(machine.received(.ignored(type: "binary"), now: now)) { return end }
                continue
            }
            let decoded: DirectusServerMessage
            do {
                decoded = try DirectusServerMessage(decoding: bytes)
            } catch {
                // A frame that is not a Directus message loses nothing; keep the subscription (and its events).
                logger.warning("ignored an unreadable message from Directus", metadata: [LogKey.error: "\(error)"])
                continue
            }
            let inbound = Self.inbound(decoded)
            if case .subscriptionEvent(let uid, let event) = inbound {
                // Nearly every frame: delivered without the action array of `received`.
                if let index = machine.receivedEvent(uid: uid, now: now) {
                    deliver(
                        decoded, bytes: bytes, route: deliveryRoutes[index], event: event, receivedAt: receivedAt,
                        into: &read)
                }
                continue
            }
            for action in machine.received(inbound, now: now) {
                if case .deliverEvent(let index, let event) = action {
                    deliver(
                        decoded, bytes: bytes, route: deliveryRoutes[index], event: event, receivedAt: receivedAt,
                        into: &read)
                } else if let end = try perform([action]) {
                    return end
                }
            }
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

    /// Appends the events of one subscription frame to `read`.
    private func deliver(
        _ message: DirectusServerMessage, bytes: [UInt8], route: DeliveryRoute, event: ChangeEvent,
        receivedAt: Timestamp, into read: inout ReadEvents
    ) {
        guard route.passes(event) else { return }
        let elements: JSONRangeList
        switch message.data {
        case .array(let ranges): elements = ranges
        case .object(let range), .scalar(let range): elements = [range]
        case .absent: elements = []
        }
        if event == .update, let trigger {
            let keys = elements.compactMap { $0.member(route.primaryKey, in: bytes)?.keyString(in: bytes) }
            trigger.updateSeen(collection: route.collection, keys: keys, delivered: !route.triggers)
        }
        if route.triggers {
            trigger?.changeSeen(collection: route.collection)
            return
        }
        for element in elements {
            let key: String?
            let data: JSONRange?
            if event == .delete {
                key = element.keyString(in: bytes)  // §5.3: raw keys, strings or numbers
                data = nil
            } else {
                key = element.member(route.primaryKey, in: bytes)?.keyString(in: bytes)
                data = element
            }
            guard let key else {
                logger.warning(
                    "event item without a usable primary key skipped",
                    metadata: [LogKey.collection: route.collection, "primary_key": route.primaryKey])
                continue
            }
            let fields = EventLineFields(
                identifier: .live(read.ids.next(at: receivedAt)), event: event, collection: route.collection, key: key,
                origin: .live, seq: nil, time: receivedAt, receivedAt: receivedAt, subscription: route.uid, user: nil)
            // A fresh array per event, sized by the writer: a reused buffer would hand every later event a copy
            // with the capacity of the largest line so far, which the queue's byte limit does not see.
            var body: [UInt8] = []
            EventLineWriter.append(
                fields, data: data, delta: nil, in: bytes, newline: false, timeMemo: &read.timeMemo, to: &body)
            read.events.append(EncodedEvent(fields: fields, body: body))
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
                    metadata: [LogKey.subscriptionUID: route.uid, LogKey.collection: route.collection])
            case .subscriptionFailed(let index, let code, let message):
                let route = routes[index]
                logger.error(
                    Self.advice(code: code, collection: route.collection),
                    metadata: [
                        LogKey.subscriptionUID: route.uid, LogKey.collection: route.collection,
                        LogKey.errorCode: code, LogKey.error: message,
                    ])
            case .deliverEvent:
                break  // handled with the frame's bytes in `handle`
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
                    "Directus reported an error", metadata: ["type": type, LogKey.errorCode: code, LogKey.error: message])
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

/// What the events of one socket read are made with, held in a local while the read is handled.
private struct ReadEvents {
    /// The events so far (offered to the sinks after the read).
    var events: [EncodedEvent]
    /// The ids' generator (kept across reads).
    var ids: UUIDv7Generator
    /// The text of the receipt time, which every event of the read shares: formatted once per read.
    var timeMemo = RFC3339Memo()
}

/// The fields of a `SubscriptionRoute` that the socket reader uses for every event it delivers.
private final class DeliveryRoute {
    let uid: String
    let collection: String
    let primaryKey: String
    /// Activity mode: events only wake the activity reader.
    let triggers: Bool
    /// One bit per `ChangeEvent` the route passes on.
    private let eventBits: UInt8

    init(_ route: SubscriptionRoute) {
        uid = route.uid
        collection = route.collection
        primaryKey = route.primaryKey
        triggers = route.handling == .trigger
        eventBits = route.events.reduce(0) { $0 | Self.bit($1) }
    }

    func passes(_ event: ChangeEvent) -> Bool { eventBits & Self.bit(event) != 0 }

    private static func bit(_ event: ChangeEvent) -> UInt8 {
        switch event {
        case .create: 1
        case .update: 2
        case .delete: 4
        case .snapshot: 8
        }
    }
}
