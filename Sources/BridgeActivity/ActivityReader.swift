internal import BridgeDirectus
public import BridgeEvents
internal import BridgeJSON
public import BridgeSystem

/// Settings of the activity reader.
public struct ActivityReaderSettings: Sendable {
    /// How often the log is read without a socket trigger (`delivery.poll_interval`).
    public var pollInterval: Duration
    /// Activity rows per read.
    public var pageSize: Int
    /// Items per snapshot page.
    public var snapshotPageSize: Int
    /// How long a gap (an id below the highest seen that is not visible yet) may stay open before the reader
    /// treats it as a rolled-back transaction.
    public var gapTimeout: Duration
    /// First retry delay after a failed read (`directus.reconnect.initial_delay`).
    public var retryDelay: Duration
    /// Longest retry delay (`directus.reconnect.max_delay`).
    public var maxRetryDelay: Duration
    /// Interval of progress lines during long backfills and snapshots.
    public var progressInterval: Duration
    /// The least time between two reads of the activity log during a snapshot, whose pages in between carry no
    /// resume position (`runSnapshot`); the log is read also after the last page and at a clean stop.
    public var snapshotLogInterval: Duration

    /// The gap timeout: far longer than any commit takes, short enough that a rolled-back id does not hold the
    /// durable cursor (and the list of gap ids re-checked on every read) for long.
    public static let defaultGapTimeout: Duration = .seconds(30)

    /// Creates settings; pages of 500 rows and items.
    public init(
        pollInterval: Duration,
        pageSize: Int = 500,
        snapshotPageSize: Int = 500,
        gapTimeout: Duration = ActivityReaderSettings.defaultGapTimeout,
        retryDelay: Duration = .milliseconds(500),
        maxRetryDelay: Duration = .seconds(30),
        progressInterval: Duration = .seconds(5),
        snapshotLogInterval: Duration = .seconds(1)
    ) {
        self.pollInterval = pollInterval
        self.pageSize = max(1, pageSize)
        self.snapshotPageSize = max(1, snapshotPageSize)
        self.gapTimeout = gapTimeout
        self.retryDelay = retryDelay
        self.maxRetryDelay = maxRetryDelay
        self.progressInterval = progressInterval
        self.snapshotLogInterval = snapshotLogInterval
    }
}

/// Reads `directus_activity` after one sink's cursor and hands every change of the activity-mode subscriptions to
/// that sink's queue as event lines (at-least-once across socket drops, Directus restarts and bridge crashes).
///
/// Each sink has a reader of its own (docs/ARCHITECTURE.md "Independent sinks"): a sink that is down or full holds back
/// only its own reader, which then catches up from its own cursor with the same event ids, while the readers of
/// the other sinks go on. Readers that are level share their reads (`SharedActivitySource`).
///
/// * Start-up: the cursor comes from the cursor store; the first start begins at the newest activity id (no
///   history replay), and so does a subscription new to the store. Snapshots that are due run once the reader has
///   read up to their watermark (at once at a first start).
/// * A read asks for every row after the highest id seen (all collections, so that an id missing below it can
///   only be an uncommitted transaction — a *gap*) and for the open gaps by id; gaps older than the gap timeout
///   are abandoned. Rows of other collections or actions are resolved without output.
/// * Reads run when the socket reports a change (coalesced), every `poll_interval`, and back to back while pages
///   come back full. Events are `backfill` while catching up after start-up or a (re)connect or while the socket
///   is down, `live` otherwise.
/// * Each read is one batch with its progress; the reader *waits* on a full queue (`put`), so a long backfill
///   pauses while sinks are behind and memory stays bounded. The cursor store records the progress only after
///   every sink accepted the batch.
public final class ActivityReader: Sendable {
    /// Settings.
    package let settings: ActivityReaderSettings
    /// The stable id of the sink this reader feeds.
    package let sinkID: String
    /// The subscriptions served from the activity log.
    package let subscriptions: [ActivitySubscription]
    /// Where rows and items are read.
    package let source: any ActivitySource
    /// The durable cursor and subscription states.
    package let store: CursorStore
    /// Where batches go (waiting when full).
    package let queue: EventQueue
    /// Socket events and reconnects.
    package let wakeup: ActivityWakeup
    /// Whether the socket is connected (origin `live` needs it).
    package let health: HealthState
    /// Activity metrics.
    package let metrics: ActivityMetrics
    /// Received-event counters.
    package let pipelineMetrics: PipelineMetrics
    /// Logs.
    package let logger: Logger
    /// Subscriptions `directus-bridge resync` asked for while the reader runs (`requestResync`).
    package let resyncRequests = ResyncRequests()

    /// Creates a reader of `subscriptions` for the sink `sinkID`.
    public init(
        settings: ActivityReaderSettings,
        sinkID: String,
        subscriptions: [ActivitySubscription],
        source: any ActivitySource,
        store: CursorStore,
        queue: EventQueue,
        wakeup: ActivityWakeup,
        health: HealthState,
        metrics: ActivityMetrics,
        pipelineMetrics: PipelineMetrics,
        logger: Logger
    ) {
        self.settings = settings
        self.sinkID = sinkID
        self.subscriptions = subscriptions
        self.source = source
        self.store = store
        self.queue = queue
        self.wakeup = wakeup
        self.health = health
        self.metrics = metrics
        self.pipelineMetrics = pipelineMetrics
        self.logger = logger
    }

    /// Asks the running reader to snapshot `uids` again (those it serves) before its next read, and wakes it.
    package func requestResync(_ uids: Set<String>) {
        let served = uids.intersection(subscriptions.map(\.uid))
        guard !served.isEmpty else { return }
        resyncRequests.ask(served)
        wakeup.changeSeen(collection: "")
    }

    /// Runs until `stop` is triggered (or the queue is closed).
    public func run(stop: ShutdownSignal) async {
        let loop = ActivityReaderLoop(reader: self, stop: stop)
        await loop.run()
    }
}

/// The reader's mutable state, owned by the one task that runs it.
package final class ActivityReaderLoop {
    /// The reader's settings and collaborators.
    package let reader: ActivityReader
    /// Shutdown.
    package let stop: ShutdownSignal
    /// What has been handed to the queue (ahead of the durable cursor by the batches the sinks still hold).
    package var cursor = ActivityCursor(committed: 0)
    /// When each open gap was first seen.
    package var gapTracker: GapTracker
    /// The subscriptions with their start ids.
    package var builder = ActivityEventBuilder(targets: [])
    /// Catching up after start-up, a reconnect or a failed read: events are `backfill`.
    package var catchingUp = true
    /// Progress of a long backfill.
    package var backfill: ProgressLog?
    /// Delay between failed reads.
    package var backoff: Backoff
    /// When a refused read was last logged, per subscription uid.
    package var lastRefusalLog: [String: ContinuousClock.Instant] = [:]
    /// The next page, read while the previous one was processed.
    package var prefetched: (after: Int64, rows: [ActivityRow])?
    /// Snapshots due, run in turn between reads (`runPendingSnapshots`): at start-up, after a loss to retention, and
    /// those of `resync` requests. Each runs once the reader has read every row up to its watermark (`isDue`):
    /// until then reads stop at the lowest such watermark (`readPage`), so the changes below it reach the sink as
    /// change lines before the snapshot's first line.
    package var pendingSnapshots: [PendingSnapshot] = []
    /// Every row at or below this id that was visible has been read (`readPage` reached a pending snapshot's
    /// watermark, with rows above it or none left), though `cursor.head` may stand lower (no row of its own there).
    package var readThrough: Int64 = 0
    /// Whether the last page read after the head was short (`readPage`'s answer when it reads the gaps alone).
    package var lastPageCaughtUp = false
    /// The watermarks whose wait for a gap below them was logged (`reportWaitForGaps`).
    package var gapWaitsReported: Set<Int64> = []
    /// Largest number of gap ranges checked per read (the lowest first); more are checked as those resolve.
    package static let maxGapRangesPerRead = 100

    /// Creates the state for one run of `reader`.
    package init(reader: ActivityReader, stop: ShutdownSignal) {
        self.reader = reader
        self.stop = stop
        gapTracker = GapTracker(timeout: reader.settings.gapTimeout)
        backoff = Backoff(
            initialDelay: reader.settings.retryDelay,
            maxDelay: reader.settings.maxRetryDelay,
            resetAfter: .seconds(60)
        )
    }

    /// The reader's logger.
    package var logger: Logger { reader.logger }

    /// Start-up, due snapshots, then reads until `stop`.
    package func run() async {
        _ = reader.metrics.backfillProgress(sink: reader.sinkID)  // the gauges exist before the first backfill
        reader.metrics.setBackfilling(true, sink: reader.sinkID)
        guard let snapshots = await retrying("cannot read the activity cursor", { try await self.prepare() }) else {
            return
        }
        pendingSnapshots = snapshots
        guard await runPendingSnapshots() else { return }
        while !stop.isTriggered {
            guard await runRequestedResyncs() else { return }
            let signal = reader.wakeup.take()
            if signal.reconnected && !catchingUp { startCatchingUp(reason: "reconnected") }
            guard let caughtUp = await retrying("reading the activity log failed", { try await self.readPage() })
            else { return }
            // A snapshot due (a request taken while the page waited for the queue) runs before the next wait. One
            // that waits for a gap below its watermark, read up to, waits with the reader: the gap is read again at
            // each poll, and the rows above the watermark after the snapshot.
            if pendingSnapshots.contains(where: isDue) { continue }
            if readUpToLimit { reportWaitForGaps() } else if !caughtUp { continue }
            if catchingUp && caughtUp { finishCatchingUp() }
            await reader.wakeup.wait(timeout: reader.settings.pollInterval, stop: stop)
        }
    }

    // MARK: - Catching up

    package func startCatchingUp(reason: String) {
        catchingUp = true
        reader.metrics.setBackfilling(true, sink: reader.sinkID)
        backfill?.finish()
        backfill = nil
        logger.debug("catching up", metadata: [LogKey.reason: reason, LogKey.cursor: cursor.head])
    }

    private func finishCatchingUp() {
        catchingUp = false
        reader.metrics.setBackfilling(false, sink: reader.sinkID)
        // From here on what the reader reads is live (`readPage`'s origin).
        logger.debug("caught up", metadata: [LogKey.cursor: cursor.head])
        if let backfill, backfill.done > 0 {
            logger.info(
                "backfill done",
                metadata: [
                    LogKey.count: backfill.done, "rate_per_second": Int(saturating: backfill.rate),
                    LogKey.cursor: cursor.head,
                ]
            )
        }
        backfill?.finish()
        backfill = nil
    }

    // MARK: - Reading

    /// Reads one page after the head plus the open gaps, hands its events and progress to the queue, and returns
    /// whether the reader has caught up (the page was not full).
    package func readPage() async throws -> Bool {
        let origin: EventOrigin = catchingUp || !reader.health.snapshot.connected ? .backfill : .live
        let started = ContinuousClock.now
        let receivedAt = Timestamp.now()
        let source = reader.source
        let pageSize = reader.settings.pageSize
        // A snapshot waits for the rows up to its watermark: nothing above it is read before the snapshot ran.
        let limit = readLimit
        // Read up to the watermark of a snapshot that waits for gaps below it (`isDue`): only the gaps are read. The
        // rows above it are for after the snapshot; a page of them read at every wake-up would be set aside each time,
        // a read of Directus per poll for as long as the gap stays open.
        let gapsAlone = readUpToLimit
        let page: [ActivityRow]
        // A page read ahead is used when it is full, or when no snapshot waits. A short one says where the log ended
        // when it was read, which may be before the watermark was taken: it cannot show the rows up to it are read
        // (a snapshot run on its word came before changes below its watermark).
        if gapsAlone {
            page = []
        } else if let prefetched, prefetched.after == cursor.head, limit == nil || prefetched.rows.count == pageSize {
            page = prefetched.rows
        } else {
            page = try await source.activity(after: cursor.head, limit: pageSize)
        }
        prefetched = nil
        let kept = limit.map { limit in page.filter { $0.id <= limit } } ?? page
        let cut = kept.count < page.count
        // While this page's items are read and handed over, the next page is read (backfill: Directus and the
        // bridge work at the same time). Its rows are checked against the cursor when it is used.
        let nextAfter = page.count == pageSize && !cut ? page.last?.id : nil
        async let nextPage = Self.prefetch(source, after: nextAfter, limit: pageSize)
        var rows = kept
        let gaps = cursor.gaps
        if !gaps.isEmpty {
            rows += try await source.activity(in: Array(gaps.prefix(Self.maxGapRangesPerRead)), limit: pageSize)
        }
        reader.metrics.reads.increment()
        var seen = Set<Int64>()
        rows = rows.filter { !cursor.isResolved($0.id) && seen.insert($0.id).inserted }
        if let newest = page.last?.id { reader.metrics.saw(head: newest) }

        var next = cursor
        next.resolve(rows.map(\.id))
        let abandoned = gapTracker.expired(gaps: next.gaps, now: .now)
        var lost: [ClosedRange<Int64>] = []
        if !abandoned.isEmpty {
            next.resolve(ranges: abandoned)
            lost = try await lostToRetention(abandoned)
            if !lost.isEmpty { try await prepareSnapshotsAfterLoss() }
        }
        let output = try await builder.events(
            for: rows,
            origin: origin,
            source: reader.source,
            receivedAt: receivedAt
        )
        let events = output.events
        for (uid, error) in output.refused.sorted(by: { $0.key < $1.key }) { reportRefusal(uid: uid, error: error) }
        let progress = ActivityProgress(resolvedIDs: rows.map(\.id), abandoned: abandoned)
        if !events.isEmpty || !progress.isEmpty {
            try await hand(EventBatch(events: events, progress: progress, receivedAt: started))
            if origin == .backfill { reader.metrics.backfillEvents.increment(by: UInt64(events.count)) }
        }
        cursor = next
        reportAbandoned(Self.subtracting(lost, from: abandoned))
        reportLoss(lost)
        if let nextAfter, let rows = await nextPage { prefetched = (nextAfter, rows) }
        // Reading the gaps alone says nothing of the rows above: what the last page said stands.
        let caughtUp = gapsAlone ? lastPageCaughtUp : page.count < reader.settings.pageSize
        lastPageCaughtUp = caughtUp
        // Rows above the limit, or no full page: every visible row up to it is read.
        if let limit, cut || caughtUp { readThrough = max(readThrough, limit) }
        if catchingUp && !caughtUp && backfill == nil {
            // A long backfill: count it and say how far along it is (rows up to the newest id now).
            backfill = ProgressLog(
                "backfill progress",
                interval: reader.settings.progressInterval,
                logger: logger,
                gauges: reader.metrics.backfillProgress(sink: reader.sinkID)
            )
            reader.metrics.saw(head: try await reader.source.newestActivityID())
        }
        let head = cursor.head
        let newest = reader.metrics.head.value
        // Ids left, not rows (ids can be sparse); capped so that a jump of the sequence cannot trap here.
        let idsLeft = newest > Double(head) ? Int(min(newest - Double(head), 1e15)) : 0
        backfill?.advance(by: events.count, metadata: [LogKey.cursor: head], remaining: idsLeft)
        return caughtUp
    }

    /// The page after `after` (nil when there is nothing to prefetch, or when the read fails: it is read again).
    private static func prefetch(_ source: any ActivitySource, after: Int64?, limit: Int) async -> [ActivityRow]? {
        guard let after else { return nil }
        return try? await source.activity(after: after, limit: limit)
    }

    /// Puts `batch` on the sink's queue, waiting while it is full. A wait of more than a second means the sink fell
    /// behind (down, or full): what follows is read as `backfill` until this reader has caught up again.
    ///
    /// A `resync` asked while the batch waits is taken at once (`waitTakingResyncs`); the batch still goes, unless it
    /// is a page of a snapshot of `snapshotOf` and the request is of that subscription: then it is not queued, and the
    /// watermark of the resync taken instead is returned.
    @discardableResult
    package func hand(_ batch: EventBatch, snapshotOf uid: String? = nil) async throws -> Int64? {
        let started = ContinuousClock.now
        let queue = reader.queue
        // A batch that fits at once (the usual case) has no wait to take a request in.
        if !queue.offer(batch) {
            switch await waitTakingResyncs(snapshotOf: uid, { await queue.put(batch) }) {
            case .finished: break
            case .superseded(let watermark): return watermark
            case .stopped: throw QueueClosed()
            }
        }
        reader.pipelineMetrics.received(batch.events)
        if !catchingUp && ContinuousClock.now - started > .seconds(1) { startCatchingUp(reason: "the sink was behind") }
        return nil
    }
}

/// The queue was closed (shutdown): the reader stops.
package struct QueueClosed: Error {}
