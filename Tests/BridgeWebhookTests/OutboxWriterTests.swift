import BridgeHTTP
import BridgeStore
import BridgeTestSupport
import BridgeSystem
import Foundation
import Synchronization
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeSinks

/// Delivery hands its outcomes to the sink's `OutboxWriter` and never waits for the store's lock, which intake holds
/// for each batch's transaction. Each test holds an intake transaction open (`IntakeHold`: the lock and a `BEGIN
/// IMMEDIATE`, as `OutboxStore.insert` takes them) while delivery works.
@Suite struct OutboxWriterTests {
    /// What a test waits for at most (stretched by the patience factor).
    static let patience = Duration.seconds(TestEnvironment.patient(30))

    @Test func deliveryGoesOnWhileIntakeHoldsTheStoresLock() async throws {
        let engine = try await Self.whileRunningOnANewStore { store, engine, service in
            let records = try Self.commit((1...100).map { webhookEvent($0) }, into: store)
            let hold = try await IntakeHold.start(on: store)
            defer { hold.release() }
            service.accepted(records)
            // 100 attempts at 8 in flight take a dozen turns: each turn ends without the lock.
            #expect(await eventually(timeout: Self.patience) { engine.sent.count == 101 })
            #expect(await eventually(timeout: Self.patience) { service.writer.pendingWrites == 100 })
            hold.release()
            #expect(
                try await eventually(timeout: Self.patience) {
                    try store.outboxCount(sink: "s") == 0 && service.writer.pendingWrites == 0
                })
        }
        #expect(engine.sent.count == 101)
    }

    @Test func anItemsNextEventWaitsForTheCommitOfItsPreviousOutcome() async throws {
        let engine = try await Self.whileRunningOnANewStore { store, engine, service in
            let first = try Self.commit([webhookEvent(1, key: "x")], into: store)
            let second = try Self.commit([webhookEvent(2, key: "x"), webhookEvent(3, key: "y")], into: store)
            let hold = try await IntakeHold.start(on: store)
            defer { hold.release() }
            service.accepted(first)
            #expect(await eventually(timeout: Self.patience) { service.writer.pendingWrites == 1 })
            // evt_2 and evt_3 are due in the same turn: evt_3 goes out, evt_2 waits for evt_1's delete to commit
            // (a crash before it would send evt_1 again after evt_2).
            service.accepted(second)
            #expect(await eventually(timeout: Self.patience) { engine.sent.contains { $0.id == "evt_3" } })
            #expect(!engine.sent.contains { $0.id == "evt_2" })
            hold.release()
            #expect(try await eventually(timeout: Self.patience) { try store.outboxCount(sink: "s") == 0 })
        }
        let sent = engine.sent
        #expect(sent.map(\.id).sorted() == ["evt_0", "evt_1", "evt_2", "evt_3"])
        #expect(WriteAheadOutboxTests.inItemOrder(sent))
    }

    @Test func aCleanStopCommitsQueuedOutcomesSoARestartSendsNothingTwice() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "outbox").path + "/state"
        let store = try OutboxStore.open(stateDir: directory)
        let engine = FakeEngine()
        let service = try makeService(store: store, engine: engine, pollInterval: .seconds(3600))
        let sink = webhookSink(for: service, store: store)
        let stop = ShutdownSignal()
        let running = Task(executorPreference: service.executor) {
            await service.run(stop: stop, drainTimeout: .seconds(30))
        }
        try await Self.deliverOne(through: sink, store: store, engine: engine)
        let records = try Self.commit((1...50).map { webhookEvent($0) }, into: store)
        let hold = try await IntakeHold.start(on: store)
        defer { hold.release() }
        service.accepted(records)
        #expect(await eventually(timeout: Self.patience) { service.writer.pendingWrites == 50 })
        #expect(engine.sent.count == 51)
        // The stop finds every outcome queued behind the held transaction: it returns only once they are committed.
        stop.trigger()
        hold.release()
        await running.value
        #expect(service.writer.pendingWrites == 0)
        #expect(try store.outboxCount(sink: "s") == 0)
        try store.close()

        let reopened = try OutboxStore.open(stateDir: directory)
        let again = FakeEngine()
        let restarted = try makeService(store: reopened, engine: again)
        try await whileRunning(restarted) { _ in
            // Read from SQLite with whatever the first run left: only this one is left.
            try enqueue([webhookEvent(1000)], into: reopened, for: restarted)
            #expect(try await eventually(timeout: Self.patience) { try reopened.outboxCount(sink: "s") == 0 })
        }
        #expect(again.sent.map(\.id) == ["evt_1000"])
    }

    /// Runs a delivery service (no poll) of a new store while `body` runs, once one event went through; returns
    /// the engine.
    static func whileRunningOnANewStore(
        _ body: (OutboxStore, FakeEngine, WebhookDeliveryService) async throws -> Void
    ) async throws -> FakeEngine {
        let store = try makeStore()
        let engine = FakeEngine()
        let service = try makeService(store: store, engine: engine, pollInterval: .seconds(3600))
        let sink = webhookSink(for: service, store: store)
        try await whileRunning(service) { _ in
            try await deliverOne(through: sink, store: store, engine: engine)
            try await body(store, engine, service)
        }
        return engine
    }

    /// Accepts one event and waits until its outcome is committed: the service's start-up read is behind it.
    static func deliverOne(through sink: WebhookSink, store: OutboxStore, engine: FakeEngine) async throws {
        try await sink.accept([webhookEvent(0)])
        let delivered = try await eventually(timeout: patience) {
            try store.outboxCount(sink: "s") == 0 && engine.sent.count == 1
        }
        try #require(delivered)
    }

    /// Commits `events` to sink "s" without telling delivery; returns the records intake would hand over.
    static func commit(_ events: [EncodedEvent], into store: OutboxStore) throws -> [OutboxRecord] {
        try store.insert(events, sink: "s", now: Timestamp.now().unixMilliseconds, limit: 1_000_000).committed
    }
}

/// An intake transaction held open on a thread of its own: the store's lock and `BEGIN IMMEDIATE`, until `release`.
final class IntakeHold: Sendable {
    private let holding = Mutex(false)
    private let gate = DispatchSemaphore(value: 0)
    private let released = Mutex(false)

    private init() {}

    /// Holds `store` once the thread has the lock and the transaction.
    static func start(on store: OutboxStore) async throws -> IntakeHold {
        let hold = IntakeHold()
        Thread.detachNewThread {
            try? store.withState { state in
                try state.database.transaction {
                    hold.holding.withLock { $0 = true }
                    hold.gate.wait()
                }
            }
        }
        let holding = await eventually(timeout: OutboxWriterTests.patience) { hold.holding.withLock { $0 } }
        try #require(holding)
        return hold
    }

    /// Commits the empty transaction and lets the lock go (once; later calls do nothing).
    func release() {
        let first = released.withLock { released in
            defer { released = true }
            return !released
        }
        if first { gate.signal() }
    }
}
