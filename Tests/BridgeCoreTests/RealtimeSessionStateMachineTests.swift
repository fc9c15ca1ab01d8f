import BridgeSystem
@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks
import Testing

@Suite struct RealtimeSessionStateMachineTests {
    let start = ContinuousClock.now
    let subs = [
        RealtimeSessionStateMachine.Subscription(uid: "a", collection: "articles", subscribeMessage: "SUB-A"),
        RealtimeSessionStateMachine.Subscription(uid: "t", collection: "tags", subscribeMessage: "SUB-T"),
    ]

    func machine(_ mode: RealtimeSessionStateMachine.AuthMode = .handshake) -> RealtimeSessionStateMachine {
        RealtimeSessionStateMachine(
            subscriptions: subs, authMode: mode, heartbeat: .seconds(10), unsubscribeTimeout: .seconds(2), now: start)
    }

    @Test func handshakeWaitsForAuthOKBeforeSubscribing() {
        var sm = machine()
        #expect(sm.connected(accessToken: "tok", now: start) == [.send(#"{"type":"auth","access_token":"tok"}"#)])
        // Nothing else is sent until auth ok (docs/directus-protocol.md §2.2): a tick before it sends no ping.
        #expect(sm.tick(now: start + .seconds(11)) == [])
        #expect(sm.received(.authOK, now: start) == [.send("SUB-A")])
        #expect(sm.received(.subscriptionInit(uid: "a"), now: start) == [.subscriptionLive(index: 0), .send("SUB-T")])
        #expect(sm.received(.subscriptionInit(uid: "t"), now: start) == [.subscriptionLive(index: 1), .established])
        #expect(sm.isEstablished)
    }

    @Test func strictAndPublicModesSubscribeAtOnce() {
        var strict = machine(.strict)
        #expect(strict.connected(accessToken: nil, now: start) == [.send("SUB-A")])
        var open = machine(.publicAccess)
        #expect(open.connected(accessToken: nil, now: start) == [.send("SUB-A")])
    }

    @Test func subscribeErrorsWithoutUIDAreAttributedToTheOneInFlight() {
        var sm = machine(.strict)
        _ = sm.connected(accessToken: nil, now: start)
        let actions = sm.received(.subscribeError(code: "FORBIDDEN", message: "no", uid: nil), now: start)
        #expect(actions == [.subscriptionFailed(index: 0, code: "FORBIDDEN", message: "no"), .send("SUB-T")])
        #expect(sm.received(.subscriptionInit(uid: "t"), now: start) == [.subscriptionLive(index: 1), .established])
        #expect(sm.liveSubscriptions == [1])
    }

    /// A message read past for its size while a subscribe is in flight is that subscription's `init` (one item over
    /// the socket's limit among the first 100): the subscription is live and the next subscribe goes out; its real
    /// `init`, should one come later, changes nothing; a skipped message once established lost its events. Without this
    /// the first subscription waited for an `init` forever and the second was never sent.
    @Test func aMessageSkippedForItsSizeDuringASubscribeCountsAsItsInit() {
        var sm = machine(.strict)
        _ = sm.connected(accessToken: nil, now: start)
        #expect(sm.received(.oversized, now: start) == [.subscriptionLive(index: 0), .send("SUB-T")])
        #expect(sm.received(.subscriptionInit(uid: "a"), now: start) == [])
        #expect(sm.received(.subscriptionInit(uid: "t"), now: start) == [.subscriptionLive(index: 1), .established])
        #expect(sm.received(.oversized, now: start) == [.messageLost])
        #expect(sm.liveSubscriptions == [0, 1])
    }

    @Test func answersEveryPingAtOnceAndSendsItsOwnHeartbeat() {
        var sm = machine(.strict)
        _ = sm.connected(accessToken: nil, now: start)
        #expect(sm.received(.ping, now: start) == [.send(#"{"type":"pong"}"#)])
        #expect(sm.tick(now: start + .seconds(9)) == [])
        #expect(sm.tick(now: start + .seconds(10)) == [.send(#"{"type":"ping"}"#)])
        #expect(sm.tick(now: start + .seconds(15)) == [])
    }

    @Test func silenceForTwoHeartbeatsClosesTheConnection() {
        var sm = machine(.strict)
        _ = sm.connected(accessToken: nil, now: start)
        _ = sm.received(.pong, now: start + .seconds(5))
        #expect(sm.tick(now: start + .seconds(24)) == [.send(#"{"type":"ping"}"#)])
        #expect(sm.tick(now: start + .seconds(25)) == [.close(reason: .heartbeatTimeout)])
        #expect(sm.isClosed)
    }

    @Test func aShorterDeadlineThanTwoHeartbeatsClosesSooner() {
        // The server pings every 2 s (§14.4): silence for 4 s is dead although our own heartbeat is 10 s.
        var sm = RealtimeSessionStateMachine(
            subscriptions: subs, authMode: .strict, heartbeat: .seconds(10), deadAfter: .seconds(4),
            unsubscribeTimeout: .seconds(2), now: start)
        _ = sm.connected(accessToken: nil, now: start)
        #expect(sm.nextDeadline() == start + .seconds(4))
        #expect(sm.tick(now: start + .milliseconds(3999)) == [])
        #expect(sm.tick(now: start + .seconds(4)) == [.close(reason: .heartbeatTimeout)])
    }

    @Test func tokenExpiryAsksForARefreshAndReauthenticatesInBand() {
        var sm = machine()
        _ = sm.connected(accessToken: "old", now: start)
        _ = sm.received(.authOK, now: start)
        _ = sm.received(.subscriptionInit(uid: "a"), now: start)
        _ = sm.received(.subscriptionInit(uid: "t"), now: start)
        #expect(sm.received(.authError(code: "TOKEN_EXPIRED", message: "Token expired."), now: start)
            == [.refreshTokenNow])
        #expect(sm.tokenRefreshed(accessToken: "new") == [.send(#"{"type":"auth","access_token":"new"}"#)])
        #expect(sm.received(.authOK, now: start) == [.reauthenticated])
        #expect(sm.isEstablished)
    }

    /// A re-authentication sent while subscribing is still pending once every subscription is answered: its
    /// `auth ok` is reported then. An `auth ok` nobody waits for changes nothing.
    @Test func aReauthenticationOutlivesTheSubscribingState() {
        var sm = machine()
        _ = sm.connected(accessToken: "old", now: start)
        _ = sm.received(.authOK, now: start)
        #expect(sm.tokenRefreshed(accessToken: "new") == [.send(#"{"type":"auth","access_token":"new"}"#)])
        _ = sm.received(.subscriptionInit(uid: "a"), now: start)
        #expect(sm.received(.subscriptionInit(uid: "t"), now: start) == [.subscriptionLive(index: 1), .established])
        #expect(sm.received(.authOK, now: start) == [.reauthenticated])
        #expect(sm.received(.authOK, now: start) == [])
        #expect(sm.isEstablished)
    }

    /// Nothing is re-sent for an `auth` before the handshake's own answer, after shutdown started, or on a public
    /// socket (no token to renew).
    @Test func aTokenRefreshOutsideARunningSessionSendsNothing() {
        var sm = machine()
        _ = sm.connected(accessToken: "old", now: start)
        #expect(sm.tokenRefreshed(accessToken: "new") == [])
        _ = sm.received(.authOK, now: start)
        _ = sm.shutdownRequested(now: start)
        #expect(sm.tokenRefreshed(accessToken: "new") == [])
        var open = machine(.publicAccess)
        _ = open.connected(accessToken: nil, now: start)
        #expect(open.tokenRefreshed(accessToken: "new") == [])
    }

    @Test func authTimeoutAndFailureClose() {
        var sm = machine()
        _ = sm.connected(accessToken: "t", now: start)
        #expect(sm.received(.authError(code: "AUTH_FAILED", message: "Authentication handshake failed."), now: start)
            == [.close(reason: .authenticationFailed(message: "AUTH_FAILED: Authentication handshake failed."))])
        var other = machine(.strict)
        _ = other.connected(accessToken: nil, now: start)
        #expect(other.received(.authError(code: "AUTH_TIMEOUT", message: "x"), now: start)
            == [.close(reason: .authenticationTimedOut)])
    }

    @Test func eventsAreRoutedByUID() {
        var sm = machine(.strict)
        _ = sm.connected(accessToken: nil, now: start)
        #expect(sm.received(.subscriptionEvent(uid: "t", event: .delete), now: start)
            == [.deliverEvent(index: 1, event: .delete)])
        #expect(sm.received(.subscriptionEvent(uid: "zzz", event: .create), now: start) == [])
        #expect(sm.received(.subscriptionEvent(uid: nil, event: .create), now: start) == [])
    }

    @Test func shutdownUnsubscribesThenClosesOnAcksOrTimeout() {
        var sm = machine(.strict)
        _ = sm.connected(accessToken: nil, now: start)
        _ = sm.received(.subscriptionInit(uid: "a"), now: start)
        _ = sm.received(.subscriptionInit(uid: "t"), now: start)
        #expect(sm.shutdownRequested(now: start) == [
            .send(#"{"type":"unsubscribe","uid":"a"}"#), .send(#"{"type":"unsubscribe","uid":"t"}"#),
        ])
        #expect(sm.received(.unsubscribed(uid: "a"), now: start) == [])
        #expect(sm.received(.unsubscribed(uid: "t"), now: start) == [.close(reason: .shutdown)])

        var slow = machine(.strict)
        _ = slow.connected(accessToken: nil, now: start)
        _ = slow.shutdownRequested(now: start)
        #expect(slow.tick(now: start + .seconds(1)) == [])
        #expect(slow.tick(now: start + .seconds(2)) == [.close(reason: .shutdownUnanswered)])
    }

    @Test func authMessageEscapesTheToken() {
        #expect(RealtimeSessionStateMachine.authMessage(accessToken: "a\"b") == #"{"type":"auth","access_token":"a\"b"}"#)
    }
}

@Suite struct BackoffTests {
    @Test func delaysGrowExponentiallyWithinBounds() {
        var backoff = Backoff(initialDelay: .milliseconds(500), maxDelay: .seconds(30), resetAfter: .seconds(60))
        #expect(backoff.upperBound(forAttempt: 0) == .milliseconds(500))
        #expect(backoff.upperBound(forAttempt: 3) == .seconds(4))
        #expect(backoff.upperBound(forAttempt: 20) == .seconds(30))
        for attempt in 0..<12 {
            let delay = backoff.nextDelay()
            #expect(delay >= .milliseconds(500))
            #expect(delay <= backoff.upperBound(forAttempt: attempt))
        }
        #expect(backoff.attempt == 12)
    }

    @Test func jitterSpreadsDelays() {
        var backoff = Backoff(initialDelay: .milliseconds(100), maxDelay: .seconds(10), resetAfter: .seconds(1))
        var delays = Set<Duration>()
        for _ in 0..<20 {
            var copy = backoff
            for _ in 0..<6 { _ = copy.nextDelay() }
            delays.insert(copy.nextDelay())
        }
        #expect(delays.count > 10)
        _ = backoff.nextDelay()
    }

    @Test func aLongLivedConnectionResetsTheBackoff() {
        var backoff = Backoff(initialDelay: .seconds(1), maxDelay: .seconds(30), resetAfter: .seconds(60))
        for _ in 0..<5 { _ = backoff.nextDelay() }
        backoff.connectionEnded(after: .seconds(10))
        #expect(backoff.attempt == 5)
        backoff.connectionEnded(after: .seconds(60))
        #expect(backoff.attempt == 0)
    }
}

@Suite struct ResubscribeTests {
    @Test func aRefusedSubscriptionIsAskedForAgainAfterTheInterval() {
        let start = ContinuousClock.now
        let subs = [
            RealtimeSessionStateMachine.Subscription(uid: "a", collection: "articles", subscribeMessage: "SUB-A"),
            RealtimeSessionStateMachine.Subscription(uid: "s", collection: "secrets", subscribeMessage: "SUB-S"),
        ]
        var sm = RealtimeSessionStateMachine(
            subscriptions: subs, authMode: .strict, heartbeat: .seconds(100), unsubscribeTimeout: .seconds(1),
            resubscribeInterval: .seconds(30), now: start)
        _ = sm.connected(accessToken: nil, now: start)
        _ = sm.received(.subscriptionInit(uid: "a"), now: start)
        #expect(sm.received(.subscribeError(code: "FORBIDDEN", message: "no", uid: nil), now: start)
            == [.subscriptionFailed(index: 1, code: "FORBIDDEN", message: "no"), .established])
        #expect(sm.nextDeadline() == start + .seconds(30))
        #expect(sm.tick(now: start + .seconds(29)) == [])
        #expect(sm.tick(now: start + .seconds(30)) == [.send("SUB-S")])
        // Still refused: back to established, next try 30 s later.
        #expect(sm.received(.subscribeError(code: "FORBIDDEN", message: "no", uid: nil), now: start + .seconds(30))
            == [.subscriptionFailed(index: 1, code: "FORBIDDEN", message: "no")])
        #expect(sm.isEstablished)
        #expect(sm.tick(now: start + .seconds(60)) == [.send("SUB-S")])
        // Access granted meanwhile.
        #expect(sm.received(.subscriptionInit(uid: "s"), now: start + .seconds(60)) == [.subscriptionLive(index: 1)])
        #expect(sm.liveSubscriptions == [0, 1])
        #expect(sm.tick(now: start + .seconds(95)) == [])
    }
}
