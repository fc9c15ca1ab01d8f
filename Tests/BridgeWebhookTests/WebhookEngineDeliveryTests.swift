import BridgeHTTP
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeActivity
@testable import BridgeCore
@testable import BridgeDirectus
@testable import BridgeEvents
@testable import BridgeSinks

/// The delivery service on the real `HTTPDeliveryEngine` (the batch path: attempts handed out ahead of free slots,
/// outcomes back through a `DeliveryReceiver`), against the scriptable Python receiver.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct WebhookEngineDeliveryTests {
    /// 8 in flight runs on one driver thread, 16 on two (`WebhookSinkType.engineConfiguration`).
    @Test(arguments: [8, 16])
    func answersInRandomOrderKeepEachItemInOrder(maxInFlight: Int) async throws {
        let receiver = try await WebhookReceiver.start()
        try await withServer(receiver) {
            try receiver.script(randomDelayMs: [0, 15])
            let store = try makeStore()
            let engine = try HTTPDeliveryEngine(
                configuration: WebhookSinkType.engineConfiguration(maxInFlight: maxInFlight)
            )
            let service = try makeService(
                store: store,
                engine: engine,
                maxInFlight: maxInFlight,
                url: receiver.hookURL()
            )
            // 20 items × 10 events each, interleaved in acceptance order.
            let events = (0..<200).map { webhookEvent($0, key: "\($0 % 20)") }
            try await whileRunning(service) { _ in
                try enqueue(events, into: store, for: service)
                #expect(try await eventually { try store.outboxCount(sink: "s") == 0 })
            }
            await engine.shutdown()
            let requests = try receiver.requests()
            #expect(requests.map(\.id).sorted() == events.map(\.id).sorted())  // each once: every answer was 204
            for item in 0..<20 {
                let expected = stride(from: item, to: 200, by: 20).map { "evt_\($0)" }
                #expect(
                    requests.filter { $0.json["key"] as? String == "\(item)" }.map(\.id) == expected,
                    "item \(item)"
                )
            }
        }
    }

    /// Attempts handed out ahead of free slots and not sent yet are withdrawn when shutdown starts: they stay in
    /// the outbox for the next run and are not counted as attempts.
    ///
    /// The receiver holds the first two requests until the service has noticed the stop (its "finishing" log line
    /// comes right after it withdrew the queued attempts), so the two slots cannot free early and let queued ones
    /// out, however slowly the machine runs.
    @Test func shutdownWithdrawsQueuedAttemptsWithoutCountingThem() async throws {
        let receiver = try await WebhookReceiver.start()
        try await withServer(receiver) {
            try receiver.script(steps: [["status": 204, "hold": "first"], ["status": 204, "hold": "first"]])
            let store = try makeStore()
            let registry = MetricsRegistry()
            let depths = WebhookDepths()
            let log = RecordingLogHandler()
            let engine = try HTTPDeliveryEngine(configuration: WebhookSinkType.engineConfiguration(maxInFlight: 2))
            let service = try makeService(
                store: store,
                engine: engine,
                maxInFlight: 2,
                metrics: WebhookMetrics(registry: registry, sink: "s", depths: depths),
                depths: depths,
                url: receiver.hookURL(),
                timeout: .seconds(300),  // the held requests must not time out, however long a loaded machine takes
                logger: log.logger()
            )
            try await whileRunning(service, drainTimeout: .seconds(60)) { stop in
                try enqueue((0..<20).map { webhookEvent($0) }, into: store, for: service)
                #expect(try await eventually { try receiver.requests().count >= 2 })
                stop.trigger()
                #expect(await eventually { log.contains("finishing webhook attempts in flight") })
                try receiver.release("first")
            }
            await engine.shutdown()
            // The two sent finished within the drain; the six queued behind them never reached the receiver.
            #expect(try receiver.requests().count == 2)
            #expect(try store.outboxCount(sink: "s") == 18)
            let text = registry.render()
            #expect(text.contains(#"outcome="delivered",status_class="2xx"} 2"#))
            #expect(text.contains(#"outcome="cancelled",status_class="error"} 0"#))
        }
    }

    /// When the receiver starts failing, nothing more is queued ahead: a queued attempt is signed when handed out,
    /// and behind a receiver that hangs until the timeout it would go out several timeouts later, with a
    /// `webhook-timestamp` the receiver may find too old. Here every request hangs past the 1 s timeout at one in
    /// flight; handed out 4 ahead, the fourth would be sent 3 s after it was signed.
    @Test func aFailingReceiverGetsNoAttemptsQueuedAhead() async throws {
        let receiver = try await WebhookReceiver.start()
        try await withServer(receiver) {
            try receiver.script(defaultStep: ["hang": true])
            let store = try makeStore()
            let engine = try HTTPDeliveryEngine(configuration: WebhookSinkType.engineConfiguration(maxInFlight: 1))
            let service = try makeService(
                store: store,
                engine: engine,
                schedule: [.milliseconds(50)],
                maxAttempts: 100,
                maxInFlight: 1,
                url: receiver.hookURL(),
                timeout: .seconds(1)
            )
            try await whileRunning(service, drainTimeout: .milliseconds(200)) { _ in
                try enqueue((0..<20).map { webhookEvent($0) }, into: store, for: service)
                #expect(try await eventually { try receiver.requests().count >= 5 })
            }
            await engine.shutdown()
            let requests = try receiver.requests()
            #expect(requests.count >= 5)
            for request in requests {
                // webhook-timestamp is whole seconds, rounded down: the age read here is up to 1 s more than the real one.
                // Queued 4 ahead, the fourth attempt would read 3–4 s; up to 1.8 s is left for a starved machine.
                let signed = Double(request.headers["webhook-timestamp"] ?? "") ?? 0
                #expect(
                    request.wallTime - signed < 2.8,
                    "\(request.id) sent \(request.wallTime - signed) s after signing"
                )
            }
            // That the engine never runs more than max_in_flight at once is DeliveryEngineTests' part (the receiver's
            // view of it here would depend on how soon it notices an abandoned request, which a loaded machine delays).
        }
    }
}
