import BridgeHTTP
import BridgeStore
import BridgeTestSupport
import BridgeSystem
import Foundation
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// The outbox is write-ahead: the sink commits each batch and hands the committed rows to delivery in memory;
/// SQLite is read back only for rows delivery never got from memory (a restart, a replay, a full hand-off).
///
/// To see where a delivered body came from, the stores here mark every body as SQLite keeps it: a trigger adds
/// `"stored":true` to each row as it is inserted, so a request carrying the mark was read back from SQLite, one
/// without it came from memory.
@Suite struct WriteAheadOutboxTests {
    @Test func steadyStateDeliveryTakesBodiesFromMemoryNotFromSQLite() async throws {
        let store = try makeStore()
        try markStoredBodies(store)
        let engine = FakeEngine()
        // No poll during the test: the only reads are the one at start and the one `enqueue` asks for.
        let service = try makeService(store: store, engine: engine, pollInterval: .seconds(3600))
        let sink = webhookSink(for: service, store: store)
        try await whileRunning(service) { _ in
            // Added behind the sink's back: read from SQLite. Once it went out, delivery has read the outbox.
            try enqueue([webhookEvent(0)], into: store, for: service)
            #expect(await eventually { engine.sent.count == 1 })
            for batch in 0..<5 {
                try await sink.accept((1 + batch * 20..<21 + batch * 20).map { webhookEvent($0, key: "\($0 % 7)") })
            }
            #expect(try await eventually { try store.outboxCount(sink: "s") == 0 })
        }
        let sent = engine.sent
        #expect(sent.map(\.id).sorted() == (0...100).map { "evt_\($0)" }.sorted())
        #expect(Self.inItemOrder(sent))
        #expect(engine.overlaps == 0)
        // Only evt_0's body came from SQLite, and no read ran but those the start and `enqueue` asked for (the hint
        // may come after the read that found evt_0 and ask for one more, which may run while the sink commits: the
        // rows it finds take their bodies from the hand-off).
        Self.expectBodies(readBack: ["evt_0"], sent: sent, service: service)
        let reads = service.reads.snapshot
        #expect([.poll, .replays, .refused, .moreRows].map { reads.reads($0) } == [0, 0, 0, 0])
        #expect(reads.reads(.start) == 1)
    }

    /// The cause of the one failure docs/RELIABILITY.md records for the test above: a read that runs while intake's
    /// records are on their way in memory found their rows in SQLite, and delivery then dropped the records as read
    /// already and read the bodies back. Here the rows are committed behind the hand-off's back, read at
    /// `outboxChanged`, and their records handed over only after that read: they take their bodies from the records.
    /// The item's first event is held at the receiver meanwhile, so none of the rows can be due before its record
    /// arrives.
    @Test func rowsReadBeforeTheirRecordsArriveTakeTheirBodiesFromMemory() async throws {
        let store = try makeStore()
        try markStoredBodies(store)
        let gate = ShutdownSignal()
        let engine = FakeEngine { _, _ in
            await gate.wait()
            return HTTPResponse(status: 204)
        }
        let service = try makeService(store: store, engine: engine, pollInterval: .seconds(3600))
        try await whileRunning(service) { _ in
            try enqueue([webhookEvent(0, key: "k")], into: store, for: service)
            #expect(await eventually { engine.sent.count == 1 })
            let records = try store.insert(
                (1...20).map { webhookEvent($0, key: "k") }, sink: "s", now: Timestamp.now().unixMilliseconds,
                limit: 1_000_000
            ).committed
            service.outboxChanged()
            #expect(await eventually { service.reads.snapshot.rowsLoaded == 21 })
            service.accepted(records)
            gate.trigger()
            #expect(try await eventually { try store.outboxCount(sink: "s") == 0 })
        }
        #expect(engine.sent.map(\.id) == (0...20).map { "evt_\($0)" })
        Self.expectBodies(readBack: ["evt_0"], fromHandOff: 20, sent: engine.sent, service: service)
    }

    /// Rows the sink commits before delivery's first read (a start with intake already running, as in activity
    /// mode's backfill) are read from SQLite in `seq` order behind the rows a previous run left, so an item's new
    /// events never overtake its old ones; their bodies wait aside in memory for that read instead of being read
    /// back.
    @Test func rowsCommittedBeforeTheFirstReadTakeTheirBodiesFromMemory() async throws {
        let store = try makeStore()
        try markStoredBodies(store)
        _ = try store.insert(
            [webhookEvent(0, key: "k")], sink: "s", now: Timestamp.now().unixMilliseconds, limit: 1_000_000)
        let engine = FakeEngine()
        let service = try makeService(store: store, engine: engine, pollInterval: .seconds(3600))
        let sink = webhookSink(for: service, store: store)
        for batch in 0..<3 {
            let numbers = 1 + batch * 10...10 + batch * 10
            try await sink.accept(numbers.map { webhookEvent($0, key: $0 % 2 == 0 ? "k" : "j") })
        }
        try await whileRunning(service) { _ in
            let emptied = try await eventually { try store.outboxCount(sink: "s") == 0 }
            #expect(emptied)
        }
        let sent = engine.sent
        #expect(sent.map(\.id).sorted() == (0...30).map { "evt_\($0)" }.sorted())
        #expect(Self.inItemOrder(sent))
        Self.expectBodies(readBack: ["evt_0"], fromHandOff: 30, sent: sent, service: service)
    }

    /// The sink hands its committed rows over before it lets go of the store's lock, so a delivery read never finds
    /// a row whose record is not on its way yet. Each hand-over here first asks for a read and waits up to a second
    /// for delivery to read a body back: were the lock let go before the hand-over, the read would find the rows
    /// (all due at once, distinct items) and their bodies would be read from SQLite in the next turn.
    @Test func theSinkHandsItsRowsOverBeforeADeliveryReadCanFindThem() async throws {
        let store = try makeStore()
        try markStoredBodies(store)
        let engine = FakeEngine()
        let service = try makeService(store: store, engine: engine, pollInterval: .seconds(3600))
        let sink = WebhookSink(
            sinkID: "s", name: "webhook:http://receiver.test:80", store: store, maxOutbox: 1_000_000, metrics: nil,
            logger: .silent, clock: service.clock,
            committed: { records in
                let before = service.reads.snapshot.bodiesRead
                service.outboxChanged()
                let deadline = ContinuousClock.now + .seconds(1)
                while service.reads.snapshot.bodiesRead == before && ContinuousClock.now < deadline { usleep(2_000) }
                service.accepted(records)
            })
        // The sink's runner has a thread of its own; the wait above blocks it, not the cooperative pool.
        let runner = DedicatedThreadExecutor(name: "test-runner")
        defer { runner.shutdown() }
        try await whileRunning(service) { _ in
            #expect(await eventually { service.reads.snapshot.reads(.start) == 1 })
            try await Task(executorPreference: runner) {
                try await sink.accept((1...20).map { webhookEvent($0) })
            }.value
            #expect(try await eventually { try store.outboxCount(sink: "s") == 0 })
        }
        #expect(engine.sent.map(\.id).sorted() == (1...20).map { "evt_\($0)" }.sorted())
        Self.expectBodies(readBack: [], sent: engine.sent, service: service)
    }

    @Test func rowsADeadDeliveryNeverSentAreReadBackFromSQLiteAfterARestart() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "outbox").path + "/state"
        let first = try OutboxStore.open(stateDir: directory)
        try markStoredBodies(first)
        // A delivery that takes the sink's rows into memory and dies before sending any (kill -9 after the commits).
        let dead = try makeService(store: first, engine: FakeEngine())
        let sink = webhookSink(for: dead, store: first)
        for batch in 0..<3 {
            try await sink.accept((batch * 20..<(batch + 1) * 20).map { webhookEvent($0, key: "\($0 % 5)") })
        }
        let reopened = try OutboxStore.open(stateDir: directory)
        let engine = FakeEngine()
        let service = try makeService(store: reopened, engine: engine)
        try await whileRunning(service) { _ in
            let emptied = try await eventually { try reopened.outboxCount(sink: "s") == 0 }
            #expect(emptied)
        }
        let sent = engine.sent
        #expect(sent.map(\.id).sorted() == (0..<60).map { "evt_\($0)" }.sorted())
        #expect(sent.allSatisfy { Self.readBack($0) })
        #expect(Self.inItemOrder(sent))
    }

    @Test func aFullHandOffFallsBackToSQLiteWithoutReorderingAnItem() async throws {
        let store = try makeStore()
        try markStoredBodies(store)
        // Room for a batch or two in memory: the receiver's slowness fills it, later batches are refused.
        let engine = FakeEngine(maxInFlight: 2) { _, _ in
            try await Task.sleep(for: .milliseconds(10))
            return HTTPResponse(status: 204)
        }
        let service = try makeService(store: store, engine: engine, maxInFlight: 2, handOffBytes: 4_000)
        let sink = webhookSink(for: service, store: store)
        try await whileRunning(service) { _ in
            try enqueue([webhookEvent(1000, key: "x")], into: store, for: service)
            #expect(await eventually { engine.sent.count == 1 })
            for batch in 0..<12 {
                try await sink.accept((batch * 10..<(batch + 1) * 10).map { webhookEvent($0, key: "\($0 % 3)") })
            }
            #expect(try await eventually { try store.outboxCount(sink: "s") == 0 })
        }
        let sent = engine.sent
        #expect(sent.map(\.id).sorted() == ((0..<120).map { "evt_\($0)" } + ["evt_1000"]).sorted())
        #expect(sent.contains { Self.readBack($0) }, "no batch was refused")
        #expect(sent.contains { !Self.readBack($0) }, "nothing came from memory")
        #expect(Self.inItemOrder(sent))
    }

    /// Exactly the bodies of `readBack` came from SQLite, as the marks show and as the service counted; with
    /// `fromHandOff`, that many rows read there took their bodies from the hand-off.
    static func expectBodies(
        readBack: [String],
        fromHandOff: Int? = nil,
        sent: [FakeEngine.Sent],
        service: WebhookDeliveryService,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(sent.filter { Self.readBack($0) }.map(\.id) == readBack, sourceLocation: sourceLocation)
        let reads = service.reads.snapshot
        #expect(reads.bodiesRead == readBack.count, sourceLocation: sourceLocation)
        if let fromHandOff { #expect(reads.bodiesFromHandOff == fromHandOff, sourceLocation: sourceLocation) }
    }

    /// Whether the request's body is SQLite's copy (see the suite's comment).
    static func readBack(_ sent: FakeEngine.Sent) -> Bool {
        String(decoding: sent.request.body ?? [], as: UTF8.self).contains(#""stored":true"#)
    }

    /// Whether each item's events went out in the order of their numbers (`evt_N`), each once.
    static func inItemOrder(_ sent: [FakeEngine.Sent]) -> Bool {
        Dictionary(grouping: sent, by: \.item).values.allSatisfy { requests in
            let numbers = requests.map { Int($0.id.dropFirst(4)) ?? -1 }
            return numbers == numbers.sorted() && Set(numbers).count == numbers.count
        }
    }
}

/// Marks every body SQLite keeps in `store`'s outbox with `"stored":true` as it is inserted.
func markStoredBodies(_ store: OutboxStore) throws {
    try store.withState { state in
        try state.database.execute(
            """
            CREATE TRIGGER IF NOT EXISTS mark_stored_bodies AFTER INSERT ON outbox BEGIN
                UPDATE outbox SET body = CAST(replace(CAST(body AS TEXT), '{"id":', '{"stored":true,"id":') AS BLOB)
                WHERE seq = NEW.seq;
            END;
            """)
    }
}

/// Sink "s" of `store`, handing its committed rows to `service` as a configured webhook sink does.
func webhookSink(for service: WebhookDeliveryService, store: OutboxStore) -> WebhookSink {
    WebhookSink(
        sinkID: "s", name: "webhook:http://receiver.test:80", store: store, maxOutbox: 1_000_000, metrics: nil,
        logger: .silent, clock: service.clock, committed: { service.accepted($0) })
}
