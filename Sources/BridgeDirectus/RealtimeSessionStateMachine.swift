internal import BridgeSystem
internal import BridgeEvents

/// The Directus side of one realtime socket connection, as a pure state machine (no I/O, no clock of its own).
///
/// It follows docs/directus-protocol.md: wait for `auth ok` before sending anything else (§2.2, §13.1), answer
/// every JSON ping at once (§4), send our own JSON ping every `heartbeat` and declare the connection dead after
/// `deadAfter` without traffic (§14.4), re-authenticate in band on TOKEN_EXPIRED and after every token refresh
/// (§2.5, §2.6), subscribe one subscription at a time so that errors without a uid can be attributed (§3.1, §13.6),
/// and unsubscribe before a clean close.
///
/// The driver feeds it events (`connected`, `received`, `tick`, `tokenRefreshed`, `shutdownRequested`) and
/// performs the returned actions in order.
package struct RealtimeSessionStateMachine: Sendable {
    /// Where the connection is. Each state carries what only it needs: the subscription in flight while
    /// subscribing, the pending acknowledgements while unsubscribing, and from the first subscribe on the `Session`.
    private enum State: Sendable, Equatable {
        case idle
        case authenticating
        case subscribing(next: Int, Session)
        case established(Session)
        /// A refused subscription is asked for again (one at a time, so the answer can be attributed).
        case resubscribing(index: Int, Session)
        case unsubscribing(pending: Int, deadline: ContinuousClock.Instant)
        case closed
    }

    /// What an authenticated connection keeps from its first subscribe until shutdown.
    private struct Session: Sendable, Equatable {
        /// Subscriptions Directus refused, asked for again one at a time (the first one next).
        var refused: [Int] = []
        /// When the first of `refused` is asked for again.
        var nextResubscribe: ContinuousClock.Instant
        /// An in-band `auth` was sent and its `auth ok` has not arrived yet.
        var awaitingReauth = false
    }

    private let subscriptions: [Subscription]
    private let heartbeat: Duration
    private let deadAfter: Duration
    private let authMode: AuthMode
    private let unsubscribeTimeout: Duration
    private let resubscribeInterval: Duration
    private var state: State = .idle
    private var lastTraffic: ContinuousClock.Instant
    private var lastPingSent: ContinuousClock.Instant

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
        self.subscriptions = subscriptions
        self.authMode = authMode
        self.heartbeat = heartbeat
        self.deadAfter = deadAfter ?? heartbeat * 2
        self.unsubscribeTimeout = unsubscribeTimeout
        self.lastTraffic = now
        self.lastPingSent = now
    }

    /// Whether every subscription is answered and the session runs normally.
    package var isEstablished: Bool {
        if case .established = state { return true }
        return false
    }

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
            return subscribe(from: 0, Session(nextResubscribe: now + resubscribeInterval))
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
        case .authOK:
            return receivedAuthOK(now: now)
        case .authError(let code, let errorMessage):
            return receivedAuthError(code: code, message: errorMessage)
        case .subscriptionInit(let uid):
            return receivedInit(uid: uid)
        case .oversized:
            return receivedOversized()
        case .subscriptionEvent(let uid, let event):
            guard let index = receivedEvent(uid: uid, now: now) else { return [] }
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
            return receivedSubscribeError(code: code, message: errorMessage, uid: uid, now: now)
        case .otherError(let type, let code, let errorMessage):
            return [.logUnexpected(type: type, code: code, message: errorMessage)]
        }
    }

    /// A subscription event for `uid`: the index of the subscription that delivers it, nil for an unknown uid.
    /// `received(.subscriptionEvent…)` without its action array, for the socket reader's one call per event.
    package mutating func receivedEvent(uid: String?, now: ContinuousClock.Instant) -> Int? {
        lastTraffic = now
        guard let uid else { return nil }
        return subscriptions.firstIndex { $0.uid == uid }
    }

    /// Time passed: send our heartbeat ping, detect a dead connection, end a stalled unsubscribe.
    package mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .idle, .closed:
            return []
        case .unsubscribing(_, let deadline):
            if now >= deadline {
                state = .closed
                return [.close(reason: .shutdownUnanswered)]
            }
            return []
        case .authenticating, .subscribing, .established, .resubscribing:
            if now - lastTraffic >= deadAfter {
                state = .closed
                return [.close(reason: .heartbeatTimeout)]
            }
            // A refused subscription (FORBIDDEN until someone grants access) is asked for again now and then.
            if case .established(var session) = state, let index = session.refused.first,
                now >= session.nextResubscribe
            {
                session.nextResubscribe = now + resubscribeInterval
                state = .resubscribing(index: index, session)
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
        let heartbeatDeadline = min(lastPingSent + heartbeat, lastTraffic + deadAfter)
        switch state {
        case .unsubscribing(_, let deadline):
            return deadline
        case .established(let session) where !session.refused.isEmpty:
            return min(heartbeatDeadline, session.nextResubscribe)
        default:
            return heartbeatDeadline
        }
    }

    /// A new access token is available (scheduled refresh, or the answer to `.refreshTokenNow`).
    package mutating func tokenRefreshed(accessToken: String) -> [Action] {
        // Re-auth is useful whenever the socket is authenticated with a token; strict-mode sockets accept in-band
        // auth too (§2.5). Public sockets have no token to renew.
        guard authMode != .publicAccess else { return [] }
        switch state {
        case .subscribing(let next, var session):
            session.awaitingReauth = true
            state = .subscribing(next: next, session)
        case .established(var session):
            session.awaitingReauth = true
            state = .established(session)
        case .resubscribing(let index, var session):
            session.awaitingReauth = true
            state = .resubscribing(index: index, session)
        case .idle, .authenticating, .unsubscribing, .closed:
            return []
        }
        return [.send(Self.authMessage(accessToken: accessToken))]
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

    /// `auth ok`: the handshake's answer starts subscribing; after an in-band re-authentication it confirms it.
    private mutating func receivedAuthOK(now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .authenticating:
            return subscribe(from: 0, Session(nextResubscribe: now + resubscribeInterval))
        case .subscribing(let next, var session) where session.awaitingReauth:
            session.awaitingReauth = false
            state = .subscribing(next: next, session)
        case .established(var session) where session.awaitingReauth:
            session.awaitingReauth = false
            state = .established(session)
        case .resubscribing(let index, var session) where session.awaitingReauth:
            session.awaitingReauth = false
            state = .resubscribing(index: index, session)
        default:
            return []
        }
        return [.reauthenticated]
    }

    private mutating func receivedAuthError(code: String, message: String) -> [Action] {
        switch code {
        case "TOKEN_EXPIRED":
            // §2.6: the server waits AUTH_TIMEOUT for any auth frame; events keep flowing meanwhile.
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

    /// `init` for `uid`: the subscription in flight is live (a stray init, e.g. after a replaced subscription,
    /// changes nothing).
    private mutating func receivedInit(uid: String?) -> [Action] {
        switch state {
        case .resubscribing(let index, var session) where uid == subscriptions[index].uid:
            liveSubscriptions.insert(index)
            session.refused.removeAll { $0 == index }
            state = .established(session)
            return [.subscriptionLive(index: index)]
        case .subscribing(let next, let session) where next < subscriptions.count && uid == subscriptions[next].uid:
            liveSubscriptions.insert(next)
            return [.subscriptionLive(index: next)] + subscribe(from: next + 1, session)
        default:
            return []
        }
    }

    /// A message too large to read while a subscribe is in flight: most likely that subscription's `init` (Directus
    /// sends it at once, with the first 100 items, §5.3), so it counts as one; else the subscription would wait for an
    /// `init` that never comes, and the subscribes after it would never be sent. Out of a subscribe it changes
    /// nothing (the connection logged it).
    private mutating func receivedOversized() -> [Action] {
        switch state {
        case .resubscribing(let index, _): return receivedInit(uid: subscriptions[index].uid)
        case .subscribing(let next, _) where next < subscriptions.count: return receivedInit(uid: subscriptions[next].uid)
        // Anything else read past was a message of events (Directus sends nothing else that large): lost.
        default: return [.messageLost]
        }
    }

    /// A `subscribe` error. §3.1: most carry no uid; we send one subscribe at a time, so the error belongs to the
    /// one in flight (or to the uid, when the server named it).
    private mutating func receivedSubscribeError(
        code: String, message: String, uid: String?, now: ContinuousClock.Instant
    ) -> [Action] {
        switch state {
        case .resubscribing(let index, var session) where uid == nil || uid == subscriptions[index].uid:
            session.nextResubscribe = now + resubscribeInterval
            state = .established(session)
            return [.subscriptionFailed(index: index, code: code, message: message)]
        case .subscribing(let next, var session) where next < subscriptions.count
            && (uid == nil || uid == subscriptions[next].uid):
            session.refused.append(next)
            session.nextResubscribe = now + resubscribeInterval
            return [.subscriptionFailed(index: next, code: code, message: message)] + subscribe(from: next + 1, session)
        default:
            return [.logUnexpected(type: "subscribe", code: code, message: message)]
        }
    }

    /// Sends the subscribe of `index`, or reports the connection established when every one was answered.
    private mutating func subscribe(from index: Int, _ session: Session) -> [Action] {
        guard index < subscriptions.count else {
            state = .established(session)
            return [.established]
        }
        state = .subscribing(next: index, session)
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
