import BridgeHTTP
import BridgeTestSupport
import BridgeSystem
import Foundation
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// The outbox never silently swallows an event whose id another event holds, and no id reaches a header unencoded.
@Suite struct EventIDSafetyTests {
    /// `webhookEvent(n)` of another subscription: same id, collection and key, a body that says so.
    private func sameIDOtherSubscription(_ n: Int) -> EncodedEvent {
        var event = webhookEvent(n)
        event.subscription = "articles-drafts"
        event.body = EventBody(
            Array(#"{"id":"evt_\#(n)","collection":"articles","subscription":"articles-drafts"}"#.utf8)
        )
        return event
    }

    @Test func anIdHeldByAnotherEventIsReportedAsAConflict() throws {
        let store = try makeStore()
        let first = try store.insert([webhookEvent(1), sameIDOtherSubscription(1)], sink: "a", now: 0, limit: 10)
        #expect(first.inserted == 1)
        #expect(first.conflicts.map(\.id) == ["evt_1"], "in one batch")
        #expect(first.conflicts.first?.subscription == "articles-drafts")
        let second = try store.insert([sameIDOtherSubscription(1)], sink: "a", now: 0, limit: 10)
        #expect(second.inserted == 0)
        #expect(second.conflicts.map(\.id) == ["evt_1"], "against a row of an earlier batch")
        // The same event offered again (a batch retried, a change re-read after a crash) is no conflict.
        var again = webhookEvent(1)
        again.receivedAt = Timestamp(microsecondsSinceEpoch: 5)
        again.body = EventBody(Array(#"{"id":"evt_1","collection":"articles","key":"1","received_at":"later"}"#.utf8))
        let repeated = try store.insert([again], sink: "a", now: 0, limit: 10)
        #expect(repeated.inserted == 0 && repeated.conflicts.isEmpty)
        #expect(try store.depth(sink: "a") == 1)
    }

    /// With `format: cloudevents` the stored body is a CloudEvent whose `data` is the event object: the change is
    /// told apart by the event inside it, not by the envelope (whose top level has no `subscription` or `seq`).
    @Test func cloudEventBodiesAreComparedByTheEventTheyCarry() throws {
        let store = try makeStore()
        let encoder = EventEncoder(format: .cloudevents, source: "http://directus")
        let wrapped = encoder.encode([webhookEvent(1), sameIDOtherSubscription(1)])
        let first = try store.insert(wrapped, sink: "a", now: 0, limit: 10)
        #expect(first.inserted == 1)
        #expect(first.conflicts.map(\.subscription) == ["articles-drafts"], "another subscription's change")
        var again = webhookEvent(1)
        again.body = EventBody(Array(#"{"id":"evt_1","collection":"articles","key":"1","received_at":"later"}"#.utf8))
        let repeated = try store.insert(encoder.encode([again]), sink: "a", now: 0, limit: 10)
        #expect(repeated.inserted == 0 && repeated.conflicts.isEmpty, "the same change read again")
    }

    @Test func theSinkLogsAndCountsAConflictAtErrorLevel() async throws {
        let store = try makeStore()
        let registry = MetricsRegistry()
        let log = RecordingLogHandler()
        let sink = WebhookSink(
            sinkID: "a", name: "webhook:http://127.0.0.1:1", store: store, maxOutbox: 10,
            metrics: WebhookMetrics(registry: registry, sink: "a", depths: WebhookDepths()),
            logger: log.logger(), clock: DeliveryClock(wall: 0), committed: { _ in })
        try await sink.accept([webhookEvent(1), sameIDOtherSubscription(1)])
        #expect(registry.render().contains(#"directus_bridge_webhook_id_conflicts_total{sink="a"} 1"#))
        let records = log.all
        #expect(records.count == 1)
        #expect(records.first?.level == .error)
        #expect(records.first?.metadata[LogKey.eventID] == "evt_1")
        #expect(records.first?.metadata[LogKey.subscriptionUID] == "articles-drafts")
    }

    @Test func anIdWithLineBreaksReachesTheHeaderEncodedAndSignedAsSent() throws {
        let signer = try WebhookSigner(secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
        let builder = WebhookRequestBuilder(
            url: "http://h/", userAgent: "u", extraHeaders: [], timeout: .seconds(1), signer: signer)
        let body = Array(#"{"id":"x"}"#.utf8)
        let legacy = "snap_tags_a\r\nx-injected: 1_9"  // an id an older bridge stored in its outbox
        let request = builder.request(id: legacy, body: body, timestamp: 1_700_000_000)
        let header = try #require(request.header("webhook-id"))
        #expect(header == "snap_tags_a%0D%0Ax-injected:%201_9")
        #expect(request.headers.allSatisfy { !$0.value.utf8.contains { $0 < 0x20 || $0 == 0x7F } })
        #expect(request.header("webhook-signature") == signer.signature(id: header, timestamp: 1_700_000_000, body: body))
        // Ids the bridge makes are header-safe already: sent as they are.
        for id in ["act_5", "act_5_articles%5Fdrafts", "evt_0193a0b2-7c4d-7e8f-9a0b-1c2d3e4f5a6b", "snap_a%25b_1_2"] {
            #expect(builder.request(id: id, body: body, timestamp: 1).header("webhook-id") == id)
        }
    }
}
