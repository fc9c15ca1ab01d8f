import BridgeHTTP
import BridgeSystem
import Foundation

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// A delivery service for sink "s" of `store`, with a fixed jitter of 1 unless told otherwise.
func makeService(
    store: OutboxStore,
    engine: any DeliveryEngine,
    schedule: [Duration] = [.milliseconds(20)],
    maxAttempts: Int = 5,
    maxInFlight: Int = 8,
    pollInterval: Duration = .milliseconds(100),
    handOffBytes: Int = 16 << 20,
    metrics: WebhookMetrics? = nil,
    secrets: [String] = ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    commitDelay: Duration = .milliseconds(2),
    depths: WebhookDepths = WebhookDepths(),
    url: String = "http://receiver.test/hook",
    timeout: Duration = .seconds(5),
    wall: @escaping @Sendable () -> Int64 = { Timestamp.now().unixMilliseconds },
    logger: Logger = .silent
) throws -> WebhookDeliveryService {
    WebhookDeliveryService(
        sinkID: "s",
        store: store,
        engine: engine,
        builder: WebhookRequestBuilder(
            url: url,
            userAgent: "directus-bridge/test",
            extraHeaders: [],
            timeout: timeout,
            signer: try WebhookSigner(secrets: secrets)
        ),
        policy: RetryPolicy(schedule: schedule, maxAttempts: maxAttempts),
        settings: WebhookDeliveryService.Settings(
            maxInFlight: maxInFlight,
            pollInterval: pollInterval,
            handOffBytes: handOffBytes,
            commitDelay: commitDelay,
            jitter: { 1 },
            wall: wall
        ),
        metrics: metrics,
        depths: depths,
        logger: logger
    )
}

/// Runs `service` while `body` runs, then stops it and waits for it to return.
///
/// The service starts straight on its own thread: in the full suite, synchronous integration tests can keep
/// Swift's two cooperative threads busy for many seconds, and a service that first needed one of them to start
/// would sit idle meanwhile.
func whileRunning(
    _ service: WebhookDeliveryService,
    drainTimeout: Duration = .seconds(2),
    _ body: (ShutdownSignal) async throws -> Void
) async throws {
    let stop = ShutdownSignal()
    let running = Task(executorPreference: service.executor) {
        await service.run(stop: stop, drainTimeout: drainTimeout)
    }
    do {
        try await body(stop)
    } catch {
        stop.trigger()
        await running.value
        throw error
    }
    stop.trigger()
    await running.value
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes; returns whether it held. The generous default
/// only matters when the machine is starved (see `whileRunning`); passing tests return as soon as it holds.
func eventually(timeout: Duration = .seconds(30), _ condition: () throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try condition()
}

/// Inserts `events` into sink "s" and tells the service.
func enqueue(_ events: [EncodedEvent], into store: OutboxStore, for service: WebhookDeliveryService) throws {
    _ = try store.insert(events, sink: "s", now: Timestamp.now().unixMilliseconds, limit: 1_000_000)
    service.outboxChanged()
}

extension Duration {
    /// The duration in seconds as a Double.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
