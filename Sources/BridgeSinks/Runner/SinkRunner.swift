package import BridgeEvents
package import BridgeSystem
internal import Synchronization

/// Feeds one sink from its own inbox, as one task on a thread of its own (`runOnOwnThread`), so that its progress
/// never waits for another sink's.
///
/// Each batch is filtered for the sink, accepted (retried with backoff while the error is retriable), and — for an
/// activity batch — made durable and recorded in the sink's own cursor (at-least-once). A full sink
/// (`SinkError.isBackpressure`) drops a batch that may be dropped (`EventBatch.mayDrop`: live mode's socket batches)
/// for itself alone, counted and logged at error level; every other batch waits at the sink's cursor. A sink failing for longer than `stuckAfter` shows in `/readyz`. A non-retriable error
/// (stdout closed) ends `run` with it, and so does `abandon` (the forced phase of a shutdown).
package final class SinkRunner: Sendable {
    /// The sink.
    package let sink: ConfiguredSink
    /// Its inbox.
    package let inbox: SinkInbox
    private let recorder: (any ProgressRecorder)?
    private let permit: (any DeliveryPermit)?
    private let housekeeping: @Sendable () -> Void
    private let metrics: PipelineMetrics
    private let health: HealthState
    private let logger: Logger
    private let stuckAfter: Duration
    private let abandoned = ShutdownSignal()
    private let reopenRequests: ReopenRequests
    /// The reopen request last acted on (touched only by the runner's thread).
    private let reopenSeen = Atomic<Int>(0)
    /// Whether the last live batch was dropped because the sink was full (touched only by the runner's thread).
    private let dropping = Atomic<Bool>(false)
    /// When a wait for room in the full sink was last logged (touched only by the runner's thread).
    private let fullReport = Mutex(SinkFullReport())

    /// Creates the runner; `recorder` keeps the sink's activity cursor (nil in live mode); `permit` (shared state) is
    /// asked before every attempt to deliver or record, and ends `run` with `FencedError` once it refuses.
    /// `housekeeping` is the process's work that rides on the runners' attempts and ticks, at least once a second
    /// (`StateDirectoryKeeper.check`: it limits itself however many runners call it).
    package init(
        sink: ConfiguredSink,
        inbox: SinkInbox,
        recorder: (any ProgressRecorder)?,
        metrics: PipelineMetrics,
        health: HealthState,
        reopenRequests: ReopenRequests = ReopenRequests(),
        logger: Logger,
        stuckAfter: Duration = .seconds(30),
        permit: (any DeliveryPermit)? = nil,
        housekeeping: @escaping @Sendable () -> Void = {}
    ) {
        self.permit = permit
        self.housekeeping = housekeeping
        self.sink = sink
        self.inbox = inbox
        self.recorder = recorder
        self.metrics = metrics
        self.health = health
        self.reopenRequests = reopenRequests
        reopenSeen.store(reopenRequests.current, ordering: .relaxed)
        self.logger = logger
        self.stuckAfter = stuckAfter
    }

    /// Ends every retry at once (the forced phase of a shutdown): `run` throws `Abandoned` at its next retry.
    package func abandon() { abandoned.trigger() }

    /// Thrown by `run` after `abandon`.
    package struct Abandoned: Error, CustomStringConvertible {
        package var description: String { "sink retries abandoned at shutdown" }
    }

    /// `run()` as one task on a `DedicatedThreadExecutor` of the sink's own, so that the connector's short blocking
    /// calls (a `write(2)`, an SQLite commit) and the wait for the inbox never hold a thread of Swift's cooperative
    /// pool. When the calling task is cancelled (the forced phase of a shutdown), the runner abandons its retries and
    /// is no longer waited for: a write to a pipe nobody reads cannot be interrupted, and must not hold the process.
    package func runOnOwnThread() async throws {
        let executor = DedicatedThreadExecutor(name: "sink \(sink.id)")
        try await withTaskCancellationHandler {
            try await executor.runAbandoningOnCancel { try await self.run() }
        } onCancel: {
            abandon()
        }
    }

    /// Connects the sink, feeds it until its inbox is closed and drained, then closes it. Throws a non-retriable
    /// sink error, or `Abandoned`. Waits for batches by blocking its thread: run it through `runOnOwnThread`.
    package func run() async throws {
        do {
            try await retrying { try await sink.connector.connect() }
            let queue = inbox.queue
            reopenRequests.wake(queue)
            var deferred = DeferredSnapshotPositions()
            while true {
                // A second at most between ticks (`fsync: interval`), and held snapshot positions recorded at most a
                // second after they were held; a closed and drained inbox ends the loop. SIGHUP interrupts the wait,
                // so that an idle sink lets go of the rotated file too; a sink that is writing checks before every
                // attempt (`deliver`).
                let batch = queue.take(timeout: deferred.longestWait(.seconds(1), now: ContinuousClock.now))
                await reopenIfRequested()
                guard let batch else {
                    // No batch within the wait: the held positions are recorded now, and before the sink is closed.
                    try await recordDeferred(&deferred)
                    if queue.isClosedAndEmpty { break }
                    try await tick()
                    continue
                }
                try await deliver(batch, deferred: &deferred)
                try await tick()
            }
        } catch {
            await close()
            throw error
        }
        await close()
    }

    private func reopenIfRequested() async {
        let requested = reopenRequests.current
        if reopenSeen.exchange(requested, ordering: .relaxed) != requested { await reopen() }
    }

    private func deliver(_ batch: EventBatch, deferred: inout DeferredSnapshotPositions) async throws {
        let filter = sink.filter
        let events = filter.passesEverything ? batch.events : batch.events.filter(filter.matches)
        if !events.isEmpty {
            // A full sink may take the start of a batch (`SinkError.acceptedPrefix`): only the rest is offered again,
            // or dropped.
            var taken = 0
            let full = try await retrying(dropWhenFull: batch.mayDrop) {
                // Before every attempt, a retry too: SIGHUP's handler counts the request before the signal returns,
                // so no write that starts after the signal was delivered lands in the file logrotate moved away
                // (and may compress or delete).
                await reopenIfRequested()
                do {
                    try await sink.accept(taken == 0 ? events : Array(events[taken...]))
                } catch let error as SinkError where error.isBackpressure {
                    taken = min(events.count, taken + max(0, error.acceptedPrefix))
                    throw error
                }
            }
            if let full {
                dropping.store(true, ordering: .relaxed)
                inbox.dropped(events.count - taken, reason: full)
                if taken > 0 {
                    inbox.metrics.accepted(taken)
                    metrics.emitted(Array(events.prefix(taken)), now: Timestamp.now())
                }
                return
            }
            if dropping.exchange(false, ordering: .relaxed) {
                logger.info(
                    "sink accepting again after dropping live events",
                    metadata: [LogKey.sink: sink.id, "dropped_total": inbox.metrics.droppedTotal]
                )
            }
            inbox.metrics.accepted(events.count)
            metrics.emitted(events, now: Timestamp.now())
        }
        if let progress = batch.progress, !progress.isEmpty, let recorder {
            // A snapshot page's position waits up to a second for the next ones (`DeferredSnapshotPositions`).
            if deferred.hold(progress, now: ContinuousClock.now) {
                metrics.observeLatency(since: batch.receivedAt)
                return
            }
            // The cursor may only move past events that are on disk in the sink, or acknowledged by it: those of the
            // batches whose positions were held too.
            if !events.isEmpty || !deferred.isEmpty {
                try await retrying { try await sink.connector.makeDurable() }
            }
            let recorded = deferred.taking(into: progress)
            try await retrying { try recorder.record(recorded) }
        }
        metrics.observeLatency(since: batch.receivedAt)
    }

    /// Records the held snapshot positions once what their pages' sink accepted is durable.
    private func recordDeferred(_ deferred: inout DeferredSnapshotPositions) async throws {
        guard !deferred.isEmpty, let recorder else { return }
        try await retrying { try await sink.connector.makeDurable() }
        let recorded = deferred.taking(into: ActivityProgress())
        try await retrying { try recorder.record(recorded) }
    }

    /// Runs `body` until it succeeds (nil) through the bridge's one retry loop; retriable failures pause with
    /// backoff from 100 ms to 5 s, a full sink 100 ms each time, and after `stuckAfter` the sink shows as stuck in
    /// readiness. With `dropWhenFull`, a full sink gives up at once and its message is returned.
    @discardableResult
    private func retrying(dropWhenFull: Bool = false, _ body: () async throws -> Void) async throws -> String? {
        var backoff = Backoff(initialDelay: .milliseconds(100), maxDelay: .seconds(5))
        var failingSince: ContinuousClock.Instant?
        var logged = false
        var dropped: String?
        // With shared state the lease is asked before every attempt: a bridge that lost it delivers nothing more.
        let permit = self.permit
        let housekeeping = self.housekeeping
        let attempt = { () async throws -> Void in
            housekeeping()  // on this runner's thread: it may block on the state directory's files
            if let permit, !permit.mayDeliver() { throw FencedError(reason: "the lease is no longer held") }
            try await body()
        }
        let succeeded: Void? = try await retryingUnlessFatal(until: abandoned, backoff: &backoff, attempt) {
            error,
            delay in
            if error is FencedError { throw error }
            if let error = error as? SinkError, !error.isRetriable {
                logger.error("sink failed permanently", metadata: [LogKey.sink: sink.id, LogKey.error: error.message])
                throw error
            }
            let full = (error as? SinkError)?.isBackpressure == true
            let reason = (error as? SinkError)?.message ?? "\(error)"
            if full && dropWhenFull {
                dropped = reason
                return nil
            }
            let now = ContinuousClock.now
            if failingSince == nil {
                failingSince = now
                if !full {
                    logged = true
                    logger.error("sink failed, retrying", metadata: [LogKey.sink: sink.id, LogKey.error: reason])
                } else if let unlogged = fullReport.withLock({ $0.waitStarts(at: now) }) {
                    logged = true
                    var metadata: LogMetadata = [LogKey.sink: sink.id, LogKey.error: reason]
                    if unlogged > 0 { metadata["waits_unlogged"] = unlogged }
                    logger.warning("sink full, waiting at its cursor", metadata: metadata)
                }
            }
            if let since = failingSince, now - since >= stuckAfter {
                health.update { $0.stuckSinks[sink.id] = reason }
            }
            if full { return .milliseconds(100) }
            metrics.sinkRetried()
            return delay
        }
        if let dropped { return dropped }
        guard succeeded != nil else { throw Abandoned() }
        if failingSince != nil {
            if logged { logger.info("sink accepting again", metadata: [LogKey.sink: sink.id]) }
            health.update { $0.stuckSinks[sink.id] = nil }
        }
        return nil
    }

    private func tick() async throws {
        let now = ContinuousClock.now
        try await retrying { try await sink.connector.tick(now: now) }
    }

    private func reopen() async {
        do {
            try await sink.connector.reopen()
            logger.info("reopened output files", metadata: [LogKey.sink: sink.id])
        } catch {
            logger.error("reopen failed", metadata: [LogKey.sink: sink.id, LogKey.error: "\(error)"])
        }
    }

    private func close() async {
        do {
            try await sink.connector.close()
        } catch {
            logger.error("closing sink failed", metadata: [LogKey.sink: sink.id, LogKey.error: "\(error)"])
        }
    }
}

/// SIGHUP's requests to reopen output files (logrotate). The signal handler counts each one itself (`signalled`),
/// so a runner that checks `current` before a write sees every signal delivered before it; the signal thread then
/// wakes the runners from their waits for a batch (`wakeRunners`), so that idle sinks reopen too.
package final class ReopenRequests: Sendable {
    private let generation = HangUpCount()
    /// The runners' inboxes, interrupted by each request.
    private let queues = Mutex<[EventQueue]>([])

    /// No request yet.
    package init() {}

    /// Counts one request. Async-signal-safe (one atomic add, no lock, no allocation): SIGHUP's handler calls it.
    package func signalled() { generation.signalled() }

    /// Wakes every runner from its wait for a batch, to act on the requests counted so far.
    package func wakeRunners() {
        for queue in queues.withLock({ $0 }) { queue.interruptTake() }
    }

    /// Has `wakeRunners` interrupt `queue`'s waiting `take` (the runner's own inbox).
    package func wake(_ queue: EventQueue) {
        queues.withLock { queues in
            // With shared state every term of being active makes new runners over the same inboxes.
            if !queues.contains(where: { $0 === queue }) { queues.append(queue) }
        }
    }

    /// Requests so far.
    package var current: Int { generation.current }
}
