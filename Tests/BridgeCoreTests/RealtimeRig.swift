import BridgeJSON
import BridgeSystem
import BridgeTestSupport
import Synchronization

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// What a realtime connection is wired to in production — a sink inbox, health, metrics, a token box, the shutdown
/// signal and an activity trigger that records what woke it — around the bundled Directus emulator.
final class RealtimeRig: Sendable {
    let emulator: Emulator
    let registry = MetricsRegistry()
    let metrics: PipelineMetrics
    let health: HealthState
    let inbox: SinkInbox
    let sinks: SinkFanOut
    let stop = ShutdownSignal()
    let trigger = RecordingTrigger()

    init(subscriptions: Set<String>) async throws {
        // The driver may start seconds after its connection on a loaded machine: Directus's 10 s auth timeout would
        // end the connection before the driver says a word.
        emulator = try await Emulator.start(arguments: ["--auth-timeout", "120"])
        metrics = PipelineMetrics(registry: registry)
        health = HealthState(expectedSubscriptions: subscriptions)
        inbox = SinkInbox(
            sinkID: "test", capacity: 10_000, maxBytes: 256 << 20, registry: registry,
            pipelineMetrics: metrics, logger: .silent)
        sinks = SinkFanOut([inbox])
    }

    /// Stops the emulator on `BlockingExecutor.shared`: waiting for its exit would hold a cooperative thread.
    deinit {
        let emulator = emulator
        BlockingExecutor.shared.submit { emulator.stop() }
    }

    /// The emulator's socket endpoint.
    var socketURL: String { "ws" + emulator.url.dropFirst("http".count) + "/websocket" }

    /// A route that turns events into lines (`.emit`) or wakes the activity reader (`.trigger`).
    static func route(_ collection: String, handling: SubscriptionRoute.Handling, primaryKey: String = "id")
        -> SubscriptionRoute
    {
        SubscriptionRoute(
            uid: collection, collection: collection, primaryKey: primaryKey, events: [.create, .update, .delete],
            handling: handling,
            subscribeMessage: #"{"type":"subscribe","collection":"\#(collection)","uid":"\#(collection)"}"#)
    }

    /// Takes the inbox's batches until one holds an event of `collection` (or `timeout` passes).
    func nextEvent(of collection: String, timeout: Duration = .seconds(30)) async -> EncodedEvent? {
        var found: EncodedEvent?
        _ = await pollUntil(timeout: timeout) {
            while found == nil, let batch = inbox.queue.take(timeout: .zero) {
                found = batch.events.first { $0.collection == collection }
            }
            return found != nil
        }
        return found
    }

    /// How the driver's connection ended, once it did.
    let end = Mutex<RealtimeConnectionDriver.End?>(nil)

    /// What a failed wait should say: how the connection ended and what the emulator saw.
    func diagnosis() -> String {
        let stats = (try? emulator.controlGet("stats")) ?? [:]
        let seen = ["connections_total", "auth_messages", "auth_ok", "auth_failed", "dropped_before_auth", "closes"]
            .map { "\($0)=\(stats[$0] ?? "-")" }.joined(separator: " ")
        return "driver ended: \(end.withLock { $0 }.map { "\($0)" } ?? "not yet"); emulator: \(seen)"
    }

    /// A counter of the emulator's `/_emulator/stats`.
    func stat(_ name: String) -> Int {
        ((try? emulator.controlGet("stats"))?[name] as? Int) ?? 0
    }
}

/// An activity trigger that records every call.
final class RecordingTrigger: ActivityTrigger {
    struct Calls {
        var changes: [String] = []
        var updates: [(collection: String, keys: [String], delivered: Bool)] = []
        var reconnects = 0
    }

    let calls = Mutex(Calls())

    func changeSeen(collection: String) { calls.withLock { $0.changes.append(collection) } }

    func updateSeen(collection: String, keys: [String], delivered: Bool) {
        calls.withLock { $0.updates.append((collection, keys, delivered)) }
    }

    func socketReconnected() { calls.withLock { $0.reconnects += 1 } }
}
