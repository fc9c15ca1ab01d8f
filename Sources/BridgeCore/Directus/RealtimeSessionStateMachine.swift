import BridgeSystem

/// The Directus side of one realtime socket connection, as a pure state machine (no I/O, no clock of its own).
///
/// It follows directus-protocol.md: wait for `auth ok` before sending anything else (§2.2, §13.1), answer every
/// JSON ping at once (§4), send our own JSON ping every `heartbeat` and declare the connection dead after
/// `deadAfter` without traffic (§14.4), re-authenticate in band on TOKEN_EXPIRED and after every token refresh (§2.5, §2.6),
/// subscribe one subscription at a time so that errors without a uid can be attributed (§3.1, §13.6), and
/// unsubscribe before a clean close.
///
/// The driver feeds it events (`connected`, `received`, `tick`, `tokenRefreshed`, `shutdownRequested`) and
/// performs the returned actions in order.
package struct RealtimeSessionStateMachine: Sendable {
    /// One subscription to establish on this connection.
    package struct Subscription: Sendable, Equatable {
        /// The socket uid (starts with the configured subscription uid).
        package var uid: String
        /// The collection, for log lines.
        package var collection: String
        /// The complete `subscribe` message text.
        package var subscribeMessage: String

        /// Creates a subscription description.
        package init(uid: String, collection: String, subscribeMessage: String) {
            self.uid = uid
            self.collection = collection
            self.subscribeMessage = subscribeMessage
        }
    }

    /// How the socket authenticates (`directus.auth.mode`).
    package enum AuthMode: Sendable, Equatable {
        /// An `auth` message first, then wait for `auth ok` (§2.2).
        case handshake
        /// The token rode on the upgrade URL; no message exchange (§2.4).
        case strict
        /// No authentication (§2.1 step 5).
        case publicAccess
    }

    /// What the driver must do.
    package enum Action: Sendable, Equatable {
        /// Send this text frame.
        case send(String)
        /// A subscription's `init` arrived: it is live now.
        case subscriptionLive(index: Int)
        /// Directus refused a subscription (attributed by order; see type docs).
        case subscriptionFailed(index: Int, code: String, message: String)
        /// A change event arrived for subscription `index`; the driver reads the items from the frame.
        case deliverEvent(index: Int, event: ChangeEvent)
        /// Every subscription got an answer (live or failed): the connection is established.
        case established
        /// The access token expired on the socket: get a fresh one now and call `tokenRefreshed`.
        case refreshTokenNow
        /// Directus rotated the refresh token in an `auth ok` (keep the newest).
        case storeRefreshToken(String)
        /// An in-band re-authentication succeeded.
        case reauthenticated
        /// Close the connection (with 1000 when `clean`) and report `reason`.
        case close(reason: CloseReason)
        /// Something worth a log line that changes nothing (an unexpected error envelope).
        case logUnexpected(type: String, code: String, message: String)
    }

    /// Why the state machine ends a connection.
    package enum CloseReason: Sendable, Equatable {
        /// Shutdown completed (unsubscribed, or the wait for acks ran out).
        case shutdown
        /// No traffic for `deadAfter`.
        case heartbeatTimeout
        /// The handshake `auth` was refused (credentials or token no longer valid).
        case authenticationFailed(message: String)
        /// The server gave up waiting for re-authentication after TOKEN_EXPIRED (it closes next).
        case authenticationTimedOut
    }

    private enum State: Sendable, Equatable {
        case idle
        case authenticating
        case subscribing(next: Int)
        case established
        /// A refused subscription is asked for again (one at a time, so the answer can be attributed).
        case resubscribing(index: Int)
        case unsubscribing(pending: Int, deadline: ContinuousClock.Instant)
        case closed
    }

    private let subscriptions: [Subscription]
    private let heartbeat: Duration
    private let deadAfter: Duration
    private let authMode: AuthMode
    private let unsubscribeTimeout: Duration
    private let resubscribeInterval: Duration
    private var failedSubscriptions: [Int] = []
    private var nextResubscribe: ContinuousClock.Instant
    private var state: State = .idle
    private var lastTraffic: ContinuousClock.Instant
    private var lastPingSent: ContinuousClock.Instant
    private var awaitingReauth = false
    private var tokenExpired = false

    /// Subscriptions that were answered `init` on this connection.
    package private(set) var liveSubscriptions: Set<Int> = []

    /// Creates the machine for one connection attempt. `heartbeat` is our ping interval; the connection is dead
    /// after `deadAfter` without traffic (default twice the heartbeat; the runtime passes the rule of
    /// `ServerHeartbeat.deadAfter`, which follows the interval the server really pings at, §14.4).
    package init(
        subscriptions: [Subscription], authMode: AuthMode, heartbeat: Duration, deadAfter: Duration? = nil,
        unsubscribeTimeout: Duration, resubscribeInterval: Duration = .seconds(30), now: ContinuousClock.Instant
    ) {
        self.resubscribeInterval = resubscribeInterval
        self.nextResubscribe = now + resubscribeInterval
        self.subscriptions = subscriptions
        self.authMode = authMode
        self.heartbeat = heartbeat
        self.deadAfter = deadAfter ?? heartbeat * 2
        self.unsubscribeTimeout = unsubscribeTimeout
        self.lastTraffic = now
        self.lastPingSent = now
    }

    /// Whether every subscription is answered and the session runs normally.
    package var isEstablished: Bool { state == .established }

    /// Whether the machine has asked for the connection to close.
    package var isClosed: Bool { state == .closed }

    /// The WebSocket upgrade succeeded. `accessToken` is the token for the handshake `auth` message (nil for the
    /// strict and public modes, where no message is exchanged).
    package mutating func connected(accessToken: String?, now: ContinuousClock.Instant) -> [Action] {
        precondition(state == .idle, "connected() called twice")
        lastTraffic = now
        lastPingSent = now
        switch authMode {
        case .handshake:
            guard let accessToken else {
                state = .closed
                return [.close(reason: .authenticationFailed(message: "no access token for the handshake"))]
            }
            state = .authenticating
            return [.send(Self.authMessage(accessToken: accessToken))]
        case .strict, .publicAccess:
            return startSubscribing()
        }
    }

    /// A message arrived.
    package mutating func received(_ message: RealtimeInbound, now: ContinuousClock.Instant) -> [Action] {
        lastTraffic = now
        switch message {
        case .ping:
            // §4: answer at once, whatever state we are in; in `authenticating` the server has no listener yet
            // but it also sends no pings before auth ok.
            return [.send(#"{"type":"pong"}"#)]
        case .pong, .ignored:
            return []
        case .authOK(let refreshToken):
            var actions: [Action] = refreshToken.map { [.storeRefreshToken($0)] } ?? []
            if state == .authenticating {
                actions += startSubscribing()
            } else if awaitingReauth {
                awaitingReauth = false
                tokenExpired = false
                actions.append(.reauthenticated)
            }
            return actions
        case .authError(let code, let errorMessage):
            return receivedAuthError(code: code, message: errorMessage)
        case .subscriptionInit(let uid):
            if case .resubscribing(let index) = state, uid == subscriptions[index].uid {
                liveSubscriptions.insert(index)
                failedSubscriptions.removeAll { $0 == index }
                state = .established
                return [.subscriptionLive(index: index)]
            }
            guard case .subscribing(let next) = state, next < subscriptions.count, uid == subscriptions[next].uid
            else { return [] }  // a stray init (e.g. after a replaced subscription) changes nothing
            liveSubscriptions.insert(next)
            return [.subscriptionLive(index: next)] + subscribe(from: next + 1)
        case .subscriptionEvent(let uid, let event):
            guard let uid, let index = subscriptions.firstIndex(where: { $0.uid == uid }) else { return [] }
            return [.deliverEvent(index: index, event: event)]
        case .unsubscribed:
            guard case .unsubscribing(let pending, let deadline) = state else { return [] }
            if pending <= 1 {
                state = .closed
                return [.close(reason: .shutdown)]
            }
            state = .unsubscribing(pending: pending - 1, deadline: deadline)
            return []
        case .subscribeError(let code, let errorMessage, let uid):
            // §3.1: most subscribe errors carry no uid; we send one subscribe at a time, so the error belongs to
            // the one in flight (or to the uid, when the server named it).
            if case .resubscribing(let index) = state, uid == nil || uid == subscriptions[index].uid {
                state = .established
                nextResubscribe = now + resubscribeInterval
                return [.subscriptionFailed(index: index, code: code, message: errorMessage)]
            }
            guard case .subscribing(let next) = state, next < subscriptions.count else {
                return [.logUnexpected(type: "subscribe", code: code, message: errorMessage)]
            }
            if let uid, uid != subscriptions[next].uid {
                return [.logUnexpected(type: "subscribe", code: code, message: errorMessage)]
            }
            failedSubscriptions.append(next)
            nextResubscribe = now + resubscribeInterval
            return [.subscriptionFailed(index: next, code: code, message: errorMessage)] + subscribe(from: next + 1)
        case .otherError(let type, let code, let errorMessage):
            return [.logUnexpected(type: type, code: code, message: errorMessage)]
        }
    }

    /// Time passed: send our heartbeat ping, detect a dead connection, end a stalled unsubscribe.
    package mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .idle, .closed:
            return []
        case .unsubscribing(_, let deadline):
            if now >= deadline {
                state = .closed
                return [.close(reason: .shutdown)]
            }
            return []
        case .authenticating, .subscribing, .established, .resubscribing:
            if now - lastTraffic >= deadAfter {
                state = .closed
                return [.close(reason: .heartbeatTimeout)]
            }
            // A refused subscription (FORBIDDEN until someone grants access) is asked for again now and then.
            if state == .established, let index = failedSubscriptions.first, now >= nextResubscribe {
                state = .resubscribing(index: index)
                nextResubscribe = now + resubscribeInterval
                return [.send(subscriptions[index].subscribeMessage)]
            }
            // No ping before auth ok: Directus drops frames sent before it (§2.2).
            if state != .authenticating, now - lastPingSent >= heartbeat {
                lastPingSent = now
                return [.send(#"{"type":"ping"}"#)]
            }
            return []
        }
    }

    /// The next instant at which `tick` has something to do (the driver's read timeout).
    package func nextDeadline() -> ContinuousClock.Instant {
        switch state {
        case .unsubscribing(_, let deadline): return deadline
        default:
            let heartbeatDeadline = min(lastPingSent + heartbeat, lastTraffic + deadAfter)
            return failedSubscriptions.isEmpty ? heartbeatDeadline : min(heartbeatDeadline, nextResubscribe)
        }
    }

    /// A new access token is available (scheduled refresh, or the answer to `.refreshTokenNow`).
    package mutating func tokenRefreshed(accessToken: String) -> [Action] {
        // Re-auth is useful whenever the socket is authenticated with a token; strict-mode sockets accept in-band
        // auth too (§2.5). Public sockets have no token to renew.
        guard authMode != .publicAccess else { return [] }
        switch state {
        case .subscribing, .established, .resubscribing:
            awaitingReauth = true
            return [.send(Self.authMessage(accessToken: accessToken))]
        default:
            return []
        }
    }

    /// Shutdown: unsubscribe every subscription and close once acknowledged (or after `unsubscribeTimeout`).
    package mutating func shutdownRequested(now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .subscribing, .established, .resubscribing:
            guard !subscriptions.isEmpty else {
                state = .closed
                return [.close(reason: .shutdown)]
            }
            state = .unsubscribing(pending: subscriptions.count, deadline: now + unsubscribeTimeout)
            return subscriptions.map { .send(Self.unsubscribeMessage(uid: $0.uid)) }
        case .idle, .authenticating:
            state = .closed
            return [.close(reason: .shutdown)]
        case .unsubscribing, .closed:
            return []
        }
    }

    // MARK: - Private

    private mutating func receivedAuthError(code: String, message: String) -> [Action] {
        switch code {
        case "TOKEN_EXPIRED":
            // §2.6: the server waits AUTH_TIMEOUT for any auth frame; events keep flowing meanwhile.
            tokenExpired = true
            return [.refreshTokenNow]
        case "AUTH_TIMEOUT":
            state = .closed
            return [.close(reason: .authenticationTimedOut)]
        default:
            // AUTH_FAILED: in the handshake the server closes next (§2.2); after a re-auth failure too (§2.5).
            state = .closed
            return [.close(reason: .authenticationFailed(message: "\(code): \(message)"))]
        }
    }

    private mutating func startSubscribing() -> [Action] {
        subscribe(from: 0)
    }

    private mutating func subscribe(from index: Int) -> [Action] {
        guard index < subscriptions.count else {
            state = .established
            return [.established]
        }
        state = .subscribing(next: index)
        return [.send(subscriptions[index].subscribeMessage)]
    }

    /// `{"type":"auth","access_token":"…"}` (§2.3).
    package static func authMessage(accessToken: String) -> String {
        var bytes: [UInt8] = Array(#"{"type":"auth","access_token":"#.utf8)
        appendJSONString(accessToken, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `{"type":"unsubscribe","uid":"…"}` (§5.4).
    package static func unsubscribeMessage(uid: String) -> String {
        var bytes: [UInt8] = Array(#"{"type":"unsubscribe","uid":"#.utf8)
        appendJSONString(uid, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
