import BridgeHTTP
import BridgeSystem
import Foundation

@testable import BridgeCore

/// A scripted HTTP transport for the delivery service: `respond` answers each request (it may sleep, throw, or
/// wait to be cancelled); every request is recorded with its arrival time, and per-item concurrency is checked.
final class FakeTransport: HTTPTransport, @unchecked Sendable {
    // @unchecked: every mutable property is only touched under `lock`.
    struct Sent {
        var request: HTTPRequest
        var at: ContinuousClock.Instant
        var id: String
        var item: String
    }

    typealias Respond = @Sendable (_ request: HTTPRequest, _ attempt: Int) async throws -> HTTPResponse

    private let lock = NSLock()
    private var sentRequests: [Sent] = []
    private var attemptsByID: [String: Int] = [:]
    private var busyItems: Set<String> = []
    private var running = 0
    private var overlapCount = 0
    private var peak = 0
    private var cancelledCount = 0
    private let respond: Respond

    init(_ respond: @escaping Respond = { _, _ in HTTPResponse(status: 204) }) {
        self.respond = respond
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = request.header("webhook-id") ?? ""
        let object = (try? JSONSerialization.jsonObject(with: Data(request.body ?? []))) as? [String: Any]
        let item = "\(object?["collection"] ?? "")/\(object?["key"] ?? "")"
        let attempt = lock.withLock { () -> Int in
            sentRequests.append(Sent(request: request, at: .now, id: id, item: item))
            attemptsByID[id, default: 0] += 1
            if !busyItems.insert(item).inserted { overlapCount += 1 }
            running += 1
            peak = max(peak, running)
            return attemptsByID[id]!
        }
        defer {
            lock.withLock {
                busyItems.remove(item)
                running -= 1
            }
        }
        do {
            return try await respond(request, attempt)
        } catch is CancellationError {
            lock.withLock { cancelledCount += 1 }
            throw HTTPClientError(kind: .cancelled, message: "request cancelled", url: request.url)
        }
    }

    var sent: [Sent] { lock.withLock { sentRequests } }
    /// Times a request started while another one of the same item was running (must stay 0).
    var overlaps: Int { lock.withLock { overlapCount } }
    /// The most requests running at once.
    var peakConcurrency: Int { lock.withLock { peak } }
    /// Requests abandoned by cancellation.
    var cancelled: Int { lock.withLock { cancelledCount } }
    var inFlight: Int { lock.withLock { running } }
}

/// A delivery service for sink "s" of `store`, with a fixed jitter of 1 unless told otherwise.
func makeService(
    store: OutboxStore,
    transport: any HTTPTransport,
    schedule: [Duration] = [.milliseconds(20)],
    maxAttempts: Int = 5,
    maxInFlight: Int = 8,
    pollInterval: Duration = .milliseconds(100),
    metrics: WebhookMetrics? = nil,
    secrets: [String] = ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    commitDelay: Duration = .milliseconds(2),
    depths: WebhookDepths = WebhookDepths(),
    url: String = "http://receiver.test/hook",
    timeout: Duration = .seconds(5),
    logger: Logger = .silent
) throws -> WebhookDeliveryService {
    WebhookDeliveryService(
        sinkID: "s",
        store: store,
        transport: transport,
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
            commitDelay: commitDelay,
            jitter: { 1 }
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
