public import BridgeEvents
package import BridgeHTTP
package import BridgeStore
public import BridgeSystem

/// The `type: webhook` connector: `accept` makes events durable in the outbox (one transaction per batch) and then
/// hands the committed rows to the delivery service in memory, which does the HTTP side on its own schedule as the
/// connector's background work (`run(until:)`: the `WebhookDeliveryService` loop, then the HTTP engine's shutdown).
///
/// Backpressure: while the sink's outbox holds `maxOutbox` events or more, `accept` throws a backpressure error
/// ("outbox full"): in activity mode the sink waits at its cursor, in live mode it drops and counts the batch.
public final class WebhookSink: SinkConnector, @unchecked Sendable {
    // @unchecked: `unsynced` and `lastSync` are touched only by the sink's runner, one call at a time
    // (`SinkConnector`); the rest is immutable or thread-safe.
    public let name: String
    /// The sink's id in the outbox.
    package let sinkID: String
    private let store: OutboxStore
    private let maxOutbox: Int
    private let metrics: WebhookMetrics?
    private let logger: Logger
    private let committed: @Sendable ([OutboxRecord]) -> Void
    /// The delivery service's clock (`WebhookDeliveryService.clock`): a row is due at its intake time on that clock.
    private let clock: DeliveryClock
    private let background: (@Sendable (ShutdownSignal) async -> Void)?
    private let progressAfterDelivery: Bool
    private let outboxEmptied: Wakeup?
    private var unsynced = false
    private var lastSync = ContinuousClock.now

    /// Creates the sink for outbox id `sinkID`, shown as `name` (`WebhookSinkConfig.summary`), stamping rows with
    /// `clock`, the delivery service's (a row stamped by the wall clock after a step forward would wait for the
    /// step); `committed` receives
    /// the rows of every batch that added some, once they are committed and while the store's lock is still held
    /// (it must not call the store), and `background` (the delivery service)
    /// runs as the connector's background work. With `progressAfterDelivery` (shared state) `makeDurable` returns
    /// only once the outbox of this sink is empty, looking again each time the delivery service rings
    /// `outboxEmptied`.
    package init(
        sinkID: String,
        name: String,
        store: OutboxStore,
        maxOutbox: Int,
        metrics: WebhookMetrics?,
        logger: Logger,
        clock: DeliveryClock,
        committed: @escaping @Sendable ([OutboxRecord]) -> Void,
        progressAfterDelivery: Bool = false,
        outboxEmptied: Wakeup? = nil,
        background: (@Sendable (ShutdownSignal) async -> Void)? = nil
    ) {
        self.progressAfterDelivery = progressAfterDelivery
        self.outboxEmptied = outboxEmptied
        self.name = name
        self.sinkID = sinkID
        self.store = store
        self.maxOutbox = maxOutbox
        self.metrics = metrics
        self.logger = logger
        self.committed = committed
        self.clock = clock
        self.background = background
    }

    /// Delivers the outbox until `shutdown`, then lets attempts in flight finish (see `WebhookDeliveryService`).
    public func run(until shutdown: ShutdownSignal) async throws {
        if let background { await background(shutdown) } else { await shutdown.wait() }
    }

    public func accept(_ events: [EncodedEvent]) async throws(SinkError) {
        guard !events.isEmpty else { return }
        let insertion: OutboxInsertion
        do {
            // The committed rows go to delivery before the store's lock is let go (see `OutboxStore.insert`).
            insertion = try store.insert(
                events,
                sink: sinkID,
                now: clock.now(),
                limit: maxOutbox,
                handOver: committed
            )
        } catch let full as OutboxFull {
            throw outboxFull("\(full.depth) events waiting", taken: 0)
        } catch let error as SQLiteError {
            // A lock held too long, a full disk: retried. A damaged file cannot get better by waiting.
            throw SinkError(sink: name, message: "outbox: \(error)", isRetriable: !error.isCorrupt)
        } catch {
            throw SinkError(sink: name, message: "outbox: \(error)", isRetriable: true)
        }
        if insertion.inserted > 0 { unsynced = true }
        if !insertion.conflicts.isEmpty { report(insertion.conflicts) }
        if insertion.taken < events.count {
            throw outboxFull("took \(insertion.taken) of \(events.count)", taken: insertion.taken)
        }
    }

    /// The backpressure answer of a full outbox, counted: it took the first `taken` events of the batch.
    private func outboxFull(_ detail: String, taken: Int) -> SinkError {
        metrics?.refusedBatch()
        return SinkError(
            sink: name,
            message: "outbox full (\(detail), max_outbox \(maxOutbox))",
            isRetriable: true,
            isBackpressure: true,
            acceptedPrefix: taken
        )
    }

    /// Event ids are unique per sink (``EventID``), so an id held by another event is a bug: it is logged at error
    /// level and counted, never dropped silently.
    private func report(_ conflicts: [EncodedEvent]) {
        metrics?.idConflicts(conflicts.count)
        for event in conflicts.prefix(10) {
            logger.error(
                "event id already taken in the webhook outbox by another event; this event is not delivered (a bug: "
                    + "please report it)",
                metadata: [
                    LogKey.eventID: event.id, LogKey.collection: event.collection,
                    LogKey.subscriptionUID: event.subscription, LogKey.count: conflicts.count,
                ]
            )
        }
    }

    /// Forces accepted events to disk at least once a second (see `OutboxStore`, "Durability").
    public func tick(now: ContinuousClock.Instant) async throws(SinkError) {
        if unsynced, now - lastSync >= .seconds(1) { try sync() }
    }

    /// An event leaves the bridge's hands only when it is in the outbox on disk: the outbox commits with
    /// `synchronous=NORMAL` for speed, so before the activity cursor moves on, the WAL is fsynced here.
    ///
    /// With shared state (`progressAfterDelivery`) that is not enough: the outbox is on this machine, which a
    /// failover leaves behind. The cursor then moves only once every event of this sink was answered (delivered or
    /// dead-lettered): this waits up to a second for the outbox to empty, then throws a backpressure error, so the
    /// runner waits at the cursor (asking the lease between attempts) and calls again.
    public func makeDurable() async throws(SinkError) {
        try sync()
        guard progressAfterDelivery else { return }
        let deadline = ContinuousClock.now + .seconds(1)
        var waiting = 0
        while true {
            do {
                waiting = try store.depth(sink: sinkID)
            } catch {
                throw SinkError(sink: name, message: "outbox: \(error)", isRetriable: true)
            }
            if waiting == 0 { return }
            let left = deadline - .now
            guard left > .zero, let outboxEmptied else { break }
            await outboxEmptied.wait(timeout: left)
        }
        throw SinkError(
            sink: name,
            message: "\(waiting) events wait for the receiver's answer before the shared cursor moves",
            isRetriable: true,
            isBackpressure: true
        )
    }

    public func close() async throws(SinkError) { try sync() }

    private func sync() throws(SinkError) {
        lastSync = .now
        guard unsynced else { return }
        do {
            try store.syncToDisk()
            unsynced = false
        } catch {
            throw SinkError(sink: name, message: "outbox: \(error)", isRetriable: true)
        }
    }
}
