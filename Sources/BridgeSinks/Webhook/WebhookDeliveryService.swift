package import BridgeHTTP
package import BridgeSystem
internal import Synchronization
internal import BridgeEvents
internal import BridgeStore

/// Delivers one webhook sink's outbox: takes the rows the sink committed from memory (`accepted`, through the
/// sink's `OutboxHandOff`), reads pending rows from SQLite only where memory does not have them (at start, when
/// the hand-off refused a batch, and every poll interval for rows `dlq replay` put back from another process),
/// attempts the due ones up to `maxInFlight` at once with per-item order (`WebhookDeliveryState`), and hands each
/// outcome — delete, reschedule or dead letter — to the sink's `OutboxWriter`, which writes it on its own thread.
///
/// The outbox is write-ahead: every row is committed before delivery hears of it, so the hand-off may be lost or
/// full at any moment without losing an event. What delivery knows of SQLite is "every row of the sink up to
/// `scannedSeq` is known or finished"; a row handed over above it is new, one at or below it was read already (a read
/// that ran while its record was on the way: the row takes the record's body, see `takeHandOff`). At start and while
/// a refused batch is missing from memory, delivery reads by `seq` order until it has caught up, so an item's later
/// events never overtake its earlier ones; the bodies the hand-off brings meanwhile wait aside for their rows.
///
/// The loop is the only place that touches the state. Each turn hands its attempts to the sink's `DeliveryEngine`
/// in one batch (up to 4 × `maxInFlight` out while the receiver answers, so the engine has the next ones queued
/// when a slot frees; it sends at most `maxInFlight` at once), and the engine hands finished ones back in batches
/// that ring the doorbell (plain successes only once 2 × `maxInFlight` of them wait while more are outstanding:
/// `CompletionInbox`). Outcomes go to the writer in groups (group commit): when an item whose outcome is not yet
/// handed over has its next event due, or when `commitDelay` passed since the oldest outcome not handed over, or
/// `commitBatch` outcomes wait, or at shutdown. Nothing is sent for an item before the previous outcome of that item
/// is committed — the row is parked until the writer's commit rings the loop — so a crash can repeat a delivery (same
/// `webhook-id`) but never reorder an item's events, and no turn waits for the store's lock (intake's transactions).
///
/// Graceful stop: no new attempts once `stop` triggers (those queued in the engine and not sent are withdrawn);
/// attempts in flight may finish within `drainTimeout`, then they are abandoned (cancelled, not counted) and their
/// rows stay in the outbox for the next run. `run` returns once the writer committed every outcome handed over.
package final class WebhookDeliveryService: Sendable {
    /// Tuning that is not in bridge.yaml.
    package struct Settings: Sendable {
        /// Attempts running at once (`max_in_flight`).
        package var maxInFlight: Int
        /// How often the outbox is read for rows added by another process, and its depth recounted. Default: 1 s.
        package var pollInterval: Duration
        /// Bytes of body the sink may hand over in memory and delivery keep (`OutboxHandOff`); past it, rows are
        /// read back from SQLite. Default: 16 MiB.
        package var handOffBytes: Int
        /// Rows read per query. Default: 10000.
        package var loadBatch: Int
        /// Longest an outcome waits to be handed to the writer with others (a crash before its commit sends it
        /// again). Default: 2 ms.
        package var commitDelay: Duration
        /// Outcomes that are handed to the writer at once however young. Default: 256.
        package var commitBatch: Int
        /// The retry delay's random factor, in [0.8, 1.2]. Default: `RetryPolicy.randomJitter`.
        package var jitter: @Sendable () -> Double
        /// The wall clock (Unix ms), read once when the service is made: its `DeliveryClock` counts on from there.
        /// Default: `Timestamp.now`.
        package var wall: @Sendable () -> Int64

        /// Creates settings.
        package init(
            maxInFlight: Int,
            pollInterval: Duration = .seconds(1),
            handOffBytes: Int = 16 << 20,
            loadBatch: Int = 10_000,
            commitDelay: Duration = .milliseconds(2),
            commitBatch: Int = 256,
            jitter: @escaping @Sendable () -> Double = RetryPolicy.randomJitter,
            wall: @escaping @Sendable () -> Int64 = { Timestamp.now().unixMilliseconds }
        ) {
            precondition(maxInFlight > 0 && loadBatch > 0 && commitBatch > 0, "limits must be positive")
            self.maxInFlight = maxInFlight
            self.pollInterval = pollInterval
            self.handOffBytes = handOffBytes
            self.loadBatch = loadBatch
            self.commitDelay = commitDelay
            self.commitBatch = commitBatch
            self.jitter = jitter
            self.wall = wall
        }
    }

    package struct FinishedAttempt: Sendable {
        package var seq: Int64
        package var eventID: String
        package var outcome: AttemptOutcome
        /// False for an attempt withdrawn from the engine's queue before it was sent: not counted as an attempt.
        package var sent: Bool
    }

    /// Attempts handed out at once. The engine itself runs at most `maxInFlight` and queues the rest in order, so
    /// handing out more keeps the next requests ready for the moment a slot frees (the loop fills slots in batches,
    /// and a slot that waits for the loop's next turn is a request not sent; 4× measured a little faster than 2×).
    /// Per-item order is unaffected: the state never hands out an item's next event while one is out.
    ///
    /// Queued attempts are signed when handed out. While the receiver fails nothing is queued ahead (and what was
    /// queued is withdrawn when it starts failing, see `conclude`): behind a receiver that hangs until `timeout`, a
    /// queued attempt would otherwise be sent several timeouts after it was signed, and a receiver checks the
    /// signature's timestamp against its clock (Standard Webhooks: 5 minutes of tolerance).
    package func attemptLimit(_ loop: Loop) -> Int {
        loop.receiverFailing ? settings.maxInFlight : settings.maxInFlight * 4
    }

    /// The sink's id in the outbox.
    package let sinkID: String
    package let store: OutboxStore
    /// Sends the attempts: `HTTPDeliveryEngine` in production, a scripted engine in tests.
    package let engine: any DeliveryEngine
    package let builder: WebhookRequestBuilder
    package let policy: RetryPolicy
    package let settings: Settings
    package let metrics: WebhookMetrics?
    /// The outbox and dead-letter counts after the latest turn.
    package let depths: WebhookDepths
    package let logger: Logger
    /// Due times, retry times and intake's times: elapsed time, not the wall clock's steps.
    package let clock: DeliveryClock
    package let executor = DedicatedThreadExecutor(name: "webhook")
    package let doorbell: Wakeup
    private let newRows = Atomic<Bool>(false)
    /// Rows the sink committed, on their way here in memory.
    package let handOff: OutboxHandOff
    /// Finished attempts handed back by the engine, waiting for the loop's next turn.
    package let engineCompletions: CompletionInbox
    package let receiver: DeliveryReceiver
    /// Where dead letters are filed (`SinkState.webhookDeadLetters`).
    package let deadLetters: any WebhookDeadLetterPlace
    /// Writes the outcomes into the outbox on its own thread: the loop never waits for the store's lock.
    package let writer: OutboxWriter
    /// What the loop read back from SQLite, and why.
    package let reads = OutboxReadTally()

    /// Creates the service; nothing happens until `run`.
    package init(
        sinkID: String,
        store: OutboxStore,
        engine: any DeliveryEngine,
        builder: WebhookRequestBuilder,
        policy: RetryPolicy,
        settings: Settings,
        metrics: WebhookMetrics?,
        depths: WebhookDepths = WebhookDepths(),
        deadLetters: any WebhookDeadLetterPlace = LocalWebhookDeadLetters(),
        logger: Logger
    ) {
        self.deadLetters = deadLetters
        self.sinkID = sinkID
        self.store = store
        self.engine = engine
        self.builder = builder
        self.policy = policy
        self.settings = settings
        self.metrics = metrics
        self.depths = depths
        self.logger = logger
        clock = DeliveryClock(wall: settings.wall())
        handOff = OutboxHandOff(limit: settings.handOffBytes)
        let doorbell = Wakeup(timer: executor)
        self.doorbell = doorbell
        writer = OutboxWriter(
            sinkID: sinkID, store: store, deadLetters: deadLetters, depths: depths, logger: logger,
            ring: { doorbell.ring() })
        // 2xx answers ring once 2 × max_in_flight of them wait, while more than that many attempts are outstanding.
        let engineCompletions = CompletionInbox(
            batch: settings.maxInFlight * 2, lowWater: settings.maxInFlight * 2, holdLimit: settings.commitDelay)
        self.engineCompletions = engineCompletions
        self.receiver = DeliveryReceiver { completions in
            if engineCompletions.answered(completions, now: .now) { doorbell.ring() }
        }
    }

    /// The sink committed `records` (one batch, in `seq` order): delivered from memory, or read back from SQLite
    /// when the hand-off is full. Callable from any thread; never waits for delivery.
    package func accepted(_ records: [OutboxRecord]) {
        handOff.offer(records)
        doorbell.ring()
    }

    /// Rows were added to the outbox other than through `accepted`: read them now instead of at the next poll.
    /// Callable from any thread.
    package func outboxChanged() {
        newRows.store(true, ordering: .releasing)
        doorbell.ring()
    }

    /// Delivers until `stop` triggers, then drains attempts in flight for at most `drainTimeout`.
    ///
    /// The loop runs on a thread of the service's own (`DedicatedThreadExecutor`): the outbox's short SQLite calls
    /// may block there, and resuming the loop never crosses threads.
    package func run(stop: ShutdownSignal, drainTimeout: Duration) async {
        defer {
            executor.shutdown()
            writer.executor.shutdown()
        }
        await withTaskExecutorPreference(executor) {
            await deliver(stop: stop, drainTimeout: drainTimeout)
        }
    }

    private func deliver(stop: ShutdownSignal, drainTimeout: Duration) async {
        await withDiscardingTaskGroup { group in
            group.addTask { [doorbell] in
                await stop.wait()
                doorbell.ring()
            }
            group.addTask(executorPreference: writer.executor) { [writer] in await writer.run() }
            var loop = Loop(state: WebhookDeliveryState(policy: policy), nextPoll: .now + settings.pollInterval)
            while true {
                if loop.drainDeadline == nil && stop.isTriggered {
                    loop.drainDeadline = .now + drainTimeout
                    engine.cancelWaiting(of: receiver)  // queued ahead, not sent: they stay in the outbox
                    loop.state.release(loop.parked.map(\.seq), dueAt: clock.now())
                    loop.parked.removeAll()
                    if loop.state.inFlightCount > 0 {
                        logger.info(
                            "finishing webhook attempts in flight",
                            metadata: [LogKey.sink: sinkID, LogKey.count: loop.state.inFlightCount]
                        )
                    }
                }
                if let deadline = loop.drainDeadline {
                    if loop.state.inFlightCount == 0 && loop.writes.isEmpty { break }
                    if ContinuousClock.now >= deadline {
                        if !loop.abandoned {
                            loop.abandoned = true
                            logger.warning(
                                "shutdown deadline reached; abandoning webhook attempts in flight (they stay queued)",
                                metadata: [LogKey.sink: sinkID, LogKey.count: loop.state.inFlightCount]
                            )
                            engine.cancelAll(of: receiver)
                        } else if ContinuousClock.now >= deadline + .seconds(2) {
                            break  // the store keeps failing: what is not written is delivered again next run
                        }
                    }
                }
                if await turn(&loop) { continue }
                // Parked rows wait for a commit: ask the writer for a ring, then look once more (it may have been
                // committed before the writer saw the request).
                if let ticket = loop.parked.lazy.map(\.ticket).min() {
                    writer.ringAfterCommit()
                    if writer.committed >= ticket { continue }
                }
                // Answers that came during the turn and were held (`CompletionInbox`) are taken now, not after a sleep.
                if engineCompletions.isHolding { continue }
                await doorbell.wait(
                    timeout: loop.waitTime(
                        now: clock.now(),
                        maxInFlight: attemptLimit(loop),
                        commitDelay: settings.commitDelay
                    )
                )
            }
            loop.deadLetterLog.finish { logDeadLettersHeldBack($0) }
            // Every outcome is handed over by now: the writer commits them before the store closes (a clean stop
            // sends nothing twice), giving up 2 s past the drain deadline while the store keeps failing.
            writer.finish(by: (loop.drainDeadline ?? .now) + .seconds(2))
        }
    }

    /// One turn: take in finished attempts, hand their outcomes to the writer, start due ones, and read the outbox
    /// when memory does not have what is needed. Returns true when the loop should turn again at once (new rows
    /// were read and may be due).
    ///
    /// In steady state a turn touches no lock that intake holds: outcomes go to the writer without waiting, bodies
    /// come from memory, and the depth gauge from the counts.
    private func turn(_ loop: inout Loop) async -> Bool {
        let now = clock.now()
        // Retry times count from the next whole millisecond, so a retry is never early by the rounding.
        // The inbox's list and the loop's spare trade places: neither is copied nor allocated again per turn.
        var finished: [DeliveryReceiver.Completion] = []
        swap(&finished, &loop.spareCompletions)
        engineCompletions.take(into: &finished)
        defer {
            finished.removeAll(keepingCapacity: true)
            loop.spareCompletions = finished
        }
        for completion in finished {
            guard let eventID = loop.submitted.removeValue(forKey: completion.tag) else { continue }
            let attempt = FinishedAttempt(
                seq: completion.tag,
                eventID: eventID,
                outcome: Self.outcome(of: completion.result),
                sent: completion.sent
            )
            conclude(attempt, in: &loop, now: now + 1)
        }
        let committed = writer.committed
        loop.settle(committed: committed)
        if newRows.exchange(false, ordering: .acquiringAndReleasing) {
            loop.loadAfter = loop.scannedSeq
            loop.readCauses.insert(.outboxChanged)
        }
        if writer.tookInReplays() {
            loop.loadAfter = loop.scannedSeq
            loop.readCauses.insert(.replays)
        }
        if ContinuousClock.now >= loop.nextPoll {
            loop.loadAfter = loop.scannedSeq
            loop.readCauses.insert(.poll)
            loop.recount = true
            loop.nextPoll = .now + settings.pollInterval
            writer.askForReplays()
            loop.deadLetterLog.flush(now: .now) { logDeadLettersHeldBack($0) }
        }
        takeHandOff(&loop)
        let due =
            loop.drainDeadline == nil
            ? loop.state.takeDue(now: now, limit: attemptLimit(loop) - loop.state.inFlightCount) : []
        if !loop.writes.isEmpty
            && (loop.drainDeadline != nil || loop.writes.count >= settings.commitBatch
                || loop.uncommittedSince.map { ContinuousClock.now - $0 >= settings.commitDelay } ?? false
                || due.contains { loop.state.itemHash(of: $0).map(loop.uncommittedItems.contains) ?? false })
        {
            loop.handOver(to: writer)
        }
        let ready = loop.ready(due, committed: committed)
        // Payloads come from memory; only rows read from SQLite (a restart, a replay, a full hand-off) have theirs
        // read there.
        var payloads: [OutboxPayload] = []
        var unread: [Int64] = []
        payloads.reserveCapacity(ready.count)
        for seq in ready {
            if let payload = loop.state.payload(of: seq) { payloads.append(payload) } else { unread.append(seq) }
        }
        guard loop.loadAfter != nil || loop.recount || !unread.isEmpty else {
            // No SQLite work this turn: the depth gauge comes from the counts, which intake and the writer keep.
            if let depth = store.knownDepth(sink: sinkID) { depths.outbox = depth }
            if !payloads.isEmpty { submit(payloads, in: &loop) }
            return false
        }
        let causes = unread.isEmpty ? loop.readCauses : loop.readCauses.union(.bodies)
        do {
            // Blocking SQLite reads on the service's own thread (a start, a poll, a replay, a full hand-off).
            let step = try store.deliveryStep(
                sink: sinkID,
                loadAfter: loop.loadAfter,
                loadLimit: settings.loadBatch,
                recount: loop.recount,
                due: unread
            )
            if loop.storeFailing {
                loop.storeFailing = false
                loop.storeRetries.reset()
                logger.info("webhook outbox readable again", metadata: [LogKey.sink: sinkID])
            }
            depths.outbox = step.depth
            if step.deadLetters != nil {
                deadLetters.count(into: depths, stepCount: step.deadLetters, committed: [])
            }
            loop.recount = false
            // Rows whose attempts ended but whose removal is not committed yet are still in the outbox: not new.
            let fromAside = loop.state.load(
                step.loaded, finished: step.loaded.isEmpty ? [] : loop.finishedRows, now: now)
            if fromAside > 0 { reads.tookBodiesFromHandOff(fromAside) }
            if let last = step.loaded.last?.seq { loop.scannedSeq = max(loop.scannedSeq, last) }
            loop.state.dropAside(through: loop.scannedSeq)
            if loop.loadAfter != nil {
                loop.loadAfter = step.loaded.count == settings.loadBatch ? loop.scannedSeq : nil
                if loop.loadAfter == nil { loop.catchingUp = false }
            }
            loop.readCauses = loop.loadAfter == nil ? [] : .moreRows
            recordRead(causes, step: step)
            let found = Set(step.payloads.map(\.seq))
            for seq in unread where !found.contains(seq) { loop.state.forget(seq) }
            payloads.append(contentsOf: step.payloads)
            handOff.holding(loop.state.heldBytes)
            if !payloads.isEmpty { submit(payloads, in: &loop) }
            return !step.loaded.isEmpty && loop.drainDeadline == nil
        } catch {
            let delay = loop.storeRetries.nextDelay()
            if !loop.storeFailing {
                loop.storeFailing = true
                logger.error(
                    deadLetters.failureMessage(for: error),
                    metadata: [LogKey.sink: sinkID, LogKey.error: "\(error)", LogKey.delay: delay]
                )
            }
            loop.state.release(ready, dueAt: now + WebhookDeliveryState.milliseconds(delay))
            await doorbell.wait(timeout: delay)
            return false
        }
    }
}
