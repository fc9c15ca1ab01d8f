package import BridgeSystem
private import Synchronization
internal import BridgeEvents

/// Writes one webhook sink's delivery outcomes into the outbox on a thread of its own, so the delivery loop never
/// waits for the store's lock, which intake holds for each batch's transaction (docs/ARCHITECTURE.md "Webhook
/// delivery").
///
/// Delivery hands over the outcomes of a group of finished attempts (`submit`) and goes on at once. What is handed
/// over while a transaction runs, or waits for the lock behind intake, is applied together in the next one (group
/// commit). Each hand-over gets a ticket; `committed` is the last ticket whose writes are committed. An item's next
/// event is sent only once its previous outcome is committed (`WebhookDeliveryService.Loop.ready`), so a crash can
/// repeat a delivery but never reorder an item: while such a row waits, the loop asks for a ring after the next
/// commit (`ringAfterCommit`); otherwise a commit wakes nobody.
///
/// Every write of the delivery side happens here: the outcomes, the dead letters filed before them
/// (`WebhookDeadLetterPlace.file`: the shared bucket) and the letters `dlq replay` handed back (`takeInReplays`,
/// asked for at each poll). A transaction that fails keeps its writes and is tried again (1 s, growing to 10 s);
/// `finish(by:)` lets the writer end once everything handed over is committed, or at that deadline while the store
/// keeps failing (what is not written then is delivered again at the next start: at-least-once).
package final class OutboxWriter: Sendable {
    private struct Queue {
        var writes: [OutboxWrite] = []
        var submitted: UInt64 = 0
        var replaysAsked = false
        var finishBy: ContinuousClock.Instant?
    }

    /// The writer's own thread: SQLite and the bucket block there, never on delivery's thread or the pool.
    package let executor = DedicatedThreadExecutor(name: "webhook-writer")
    private let sinkID: String
    private let store: OutboxStore
    private let deadLetters: any WebhookDeadLetterPlace
    private let depths: WebhookDepths
    private let logger: Logger
    private let wakeup: Wakeup
    private let queue = Mutex(Queue())
    private let committedTicket = Atomic<UInt64>(0)
    private let uncommitted = Atomic<Int>(0)
    private let replaysTaken = Atomic<Bool>(false)
    private let ringWanted = Atomic<Bool>(false)
    private let ring: @Sendable () -> Void

    /// A writer for `sinkID`'s rows of `store`; `ring` wakes the delivery loop (after a commit it asked for, and after
    /// replays were taken in).
    package init(
        sinkID: String,
        store: OutboxStore,
        deadLetters: any WebhookDeadLetterPlace,
        depths: WebhookDepths,
        logger: Logger,
        ring: @escaping @Sendable () -> Void
    ) {
        self.sinkID = sinkID
        self.store = store
        self.deadLetters = deadLetters
        self.depths = depths
        self.logger = logger
        self.ring = ring
        wakeup = Wakeup(timer: executor)
    }

    /// The last ticket whose writes are committed.
    package var committed: UInt64 { committedTicket.load(ordering: .sequentiallyConsistent) }

    /// Rings the loop after the next commit. The loop asks before it looks at `committed` one last time and waits,
    /// the writer stores `committed` before it looks at the request (both sequentially consistent): one of the two
    /// always sees the other, so a commit is never missed.
    package func ringAfterCommit() { ringWanted.store(true, ordering: .sequentiallyConsistent) }

    /// Writes handed over and not committed yet.
    package var pendingWrites: Int { uncommitted.load(ordering: .relaxed) }

    /// Hands `writes` (in the order they must apply) to the next transaction; returns their ticket. Never waits.
    package func submit(_ writes: [OutboxWrite]) -> UInt64 {
        uncommitted.add(writes.count, ordering: .relaxed)
        let ticket = queue.withLock { queue in
            queue.writes.append(contentsOf: writes)
            queue.submitted += 1
            return queue.submitted
        }
        wakeup.ring()
        return ticket
    }

    /// Asks for the letters `dlq replay` handed back outside the outbox to be taken into it before the next commit.
    package func askForReplays() {
        queue.withLock { $0.replaysAsked = true }
        wakeup.ring()
    }

    /// Whether replayed letters went into the outbox since the last call (delivery reads the outbox then).
    package func tookInReplays() -> Bool { replaysTaken.exchange(false, ordering: .acquiringAndReleasing) }

    /// Nothing more will be handed over: `run` returns once everything is committed, or at `deadline` while the
    /// store keeps failing.
    package func finish(by deadline: ContinuousClock.Instant) {
        queue.withLock { $0.finishBy = deadline }
        wakeup.ring()
    }

    /// Commits what is handed over until `finish(by:)`. Runs on `executor` (the wake-up's timer is its timer).
    package func run() async {
        var failing = false
        var retries = Backoff(initialDelay: .seconds(1), maxDelay: .seconds(10))
        var replaysFailing = false
        var carried: [OutboxWrite] = []
        while true {
            let (writes, ticket, replaysAsked, finishBy) = queue.withLock { queue in
                defer {
                    queue.writes.removeAll(keepingCapacity: true)
                    queue.replaysAsked = false
                }
                return (queue.writes, queue.submitted, queue.replaysAsked, queue.finishBy)
            }
            if replaysAsked { replaysFailing = takeInReplays(failing: replaysFailing) }
            var batch = carried.isEmpty ? writes : carried + writes
            if batch.isEmpty {
                if finishBy != nil { return }
                await wakeup.wait(timeout: .seconds(60))
                continue
            }
            do {
                // Dead letters kept outside the outbox (the shared bucket) are filed before their rows leave it;
                // filed ones turn into `.removed`, so a retried transaction does not file them twice.
                try deadLetters.file(&batch, from: store, sink: sinkID)
                try store.apply(batch, sink: sinkID)
            } catch {
                carried = batch
                let delay = retries.nextDelay()
                if !failing {
                    failing = true
                    logger.error(
                        deadLetters.failureMessage(for: error),
                        metadata: [LogKey.sink: sinkID, LogKey.error: "\(error)", LogKey.delay: delay])
                }
                if let finishBy, ContinuousClock.now >= finishBy {
                    logger.warning(
                        "stopping with webhook outcomes not written to the outbox; their events are delivered again "
                            + "at the next start",
                        metadata: [LogKey.sink: sinkID, LogKey.count: batch.count])
                    return
                }
                await wakeup.wait(timeout: finishBy.map { min(delay, $0 - .now) } ?? delay)
                continue
            }
            carried = []
            uncommitted.subtract(batch.count, ordering: .relaxed)
            committedTicket.store(ticket, ordering: .sequentiallyConsistent)
            if failing {
                failing = false
                retries.reset()
                logger.info("webhook outbox writable again", metadata: [LogKey.sink: sinkID])
            }
            deadLetters.count(into: depths, stepCount: nil, committed: batch)
            if let depth = store.knownDepth(sink: sinkID) { depths.outbox = depth }
            if ringWanted.exchange(false, ordering: .sequentiallyConsistent) { ring() }
        }
    }

    /// Letters `dlq replay` handed back outside the outbox go into it. A failure is logged once and tried again at
    /// the next poll; returns whether the last attempt failed.
    private func takeInReplays(failing: Bool) -> Bool {
        do {
            let taken = try deadLetters.takeInReplays(into: store, now: Timestamp.now().unixMilliseconds)
            guard taken > 0 else { return false }
            logger.info(
                "replayed dead letters taken into the outbox", metadata: [LogKey.sink: sinkID, LogKey.count: taken])
            replaysTaken.store(true, ordering: .releasing)
            ring()
            return false
        } catch {
            if !failing {
                logger.warning(
                    "cannot read the replayed dead letters from the shared state; trying again at the next poll",
                    metadata: [LogKey.sink: sinkID, LogKey.error: "\(error)"])
            }
            return true
        }
    }
}
