import BridgeHTTP
import BridgeTestSupport
import Testing

@testable import BridgeActivity
@testable import BridgeCore
@testable import BridgeDirectus
@testable import BridgeEvents
@testable import BridgeSinks

/// A receiver that answers with hostile `Retry-After` values (issue 10, defect 1), against the real
/// `HTTPDeliveryEngine`: the service survives, and the row is retried as docs/RELIABILITY.md
/// says: a value beyond the longest scheduled delay is clamped to it, a negative or unparsable one is ignored.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct HostileReceiverTests {
    /// The schedule: 50 ms, then 400 ms. A clamped Retry-After waits 400 ms; an ignored one, 50 ms.
    static let schedule: [Duration] = [.milliseconds(50), .milliseconds(400)]

    @Test(arguments: [
        ("99999999999999999", 0.4),
        ("99999999999999999999999999999999", 0.4),
        ("Fri, 31 Dec 9999 23:59:59 GMT", 0.4),
        ("Sun, 06 Nov 99999999999999999 08:49:37 GMT", 0.05),
        ("-5", 0.05),
        ("-99999999999999999", 0.05),
        ("Sun, 06 Nov 1994 08:49:37 GMT", 0.05),
    ])
    func aRetriedAnswerWaitsAtMostTheLongestScheduledDelay(retryAfter: String, minimumGap: Double) async throws {
        let receiver = try await WebhookReceiver.start()
        try await withServer(receiver) {
            try receiver.script(steps: [["status": 503, "headers": ["retry-after": retryAfter]]])
            let requests = try await deliver([webhookEvent(0, key: "a"), webhookEvent(1, key: "a")], to: receiver)
            // The same item's next event waited for the retry: nothing was reordered.
            #expect(requests.map(\.id) == ["evt_0", "evt_0", "evt_1"])
            #expect(requests.map(\.status) == [503, 204, 204])
            if requests.count == 3 {
                let gap = requests[1].time - requests[0].time
                #expect(gap >= minimumGap - 0.005, "retried \(gap) s later for Retry-After \(retryAfter)")
            }
        }
    }

    /// A 2xx answer's Retry-After is not even read: whatever it holds, the row is delivered once.
    @Test(arguments: [200, 204])
    func aSuccessWithAHostileDateIsDelivered(status: Int) async throws {
        let receiver = try await WebhookReceiver.start()
        try await withServer(receiver) {
            try receiver.script(defaultStep: [
                "status": status, "headers": ["retry-after": "Sun, 06 Nov 99999999999999999 08:49:37 GMT"],
            ])
            let requests = try await deliver([webhookEvent(0), webhookEvent(1)], to: receiver)
            #expect(requests.map(\.id).sorted() == ["evt_0", "evt_1"])
        }
    }

    /// Runs the delivery service on the real engine until the outbox is empty; returns what the receiver saw.
    private func deliver(_ events: [EncodedEvent], to receiver: WebhookReceiver) async throws
        -> [WebhookReceiver.Request]
    {
        let store = try makeStore()
        let engine = try HTTPDeliveryEngine(configuration: WebhookSinkType.engineConfiguration(maxInFlight: 4))
        let service = try makeService(
            store: store,
            engine: engine,
            schedule: Self.schedule,
            maxAttempts: 5,
            maxInFlight: 4,
            url: receiver.hookURL()
        )
        try await whileRunning(service) { _ in
            try enqueue(events, into: store, for: service)
            #expect(try await eventually { try store.outboxCount(sink: "s") == 0 })
        }
        await engine.shutdown()
        #expect(try store.deadLetterCount(sink: "s") == 0)
        return try receiver.requests()
    }
}
