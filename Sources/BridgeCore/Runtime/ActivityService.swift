package import BridgeConfig
public import BridgeSystem
package import BridgeEvents
public import BridgeDirectus
package import BridgeActivity
package import BridgeSinks

/// Activity mode's part of `run`: opens the cursor database for the configured sinks, builds one activity reader
/// per sink (each from its own cursor into its own inbox) and the wake-up the socket reader triggers for all of
/// them, and runs the readers. In live mode it does nothing.
public struct ActivityService: Sendable {
    /// What the socket reader calls for subscriptions in activity mode (nil in live mode).
    public let trigger: (any ActivityTrigger)?
    private let readers: [ActivityReader]
    private let stores: [String: CursorStore]
    /// `resync` beside the running bridge, read where the term's cursors take requests (`TermCursors.resyncRequests`);
    /// nil in live mode.
    private let resyncWatcher: ResyncRequestWatcher?
    /// `cursor.db` when the term keeps its cursors there (local state), closed by `closeFiles`.
    private let cursorFile: CursorDatabase?

    private init(
        trigger: (any ActivityTrigger)?, readers: [ActivityReader], stores: [String: CursorStore],
        resyncWatcher: ResyncRequestWatcher?, cursorFile: CursorDatabase?
    ) {
        self.trigger = trigger
        self.readers = readers
        self.stores = stores
        self.resyncWatcher = resyncWatcher
        self.cursorFile = cursorFile
    }

    /// Nothing to run: live mode.
    public static let live = ActivityService(
        trigger: nil, readers: [], stores: [:], resyncWatcher: nil, cursorFile: nil)

    /// Keeps `cursor.db` at its path (`CursorDatabase.keepAtPath`), for the state directory's periodic check.
    package func keepCursorFileAtPath() throws {
        try cursorFile?.keepAtPath()
    }

    /// Closes `cursor.db` at the end of the term, once the readers and the sinks' runners stopped recording: a
    /// checkpoint and no `-wal` left, whatever thread still holds a reference when the process exits
    /// (`SQLiteDatabase.close()`).
    package func closeFiles(logger: Logger) {
        do {
            try cursorFile?.close()
        } catch {
            logger.error("cursor.db was not closed cleanly", metadata: [LogKey.error: "\(error)"])
        }
    }

    /// The cursor store a sink's runner records its progress in (nil in live mode).
    package func recorder(for sinkID: String) -> (any ProgressRecorder)? { stores[sinkID] }

    /// Builds the service for `plan` over the term's cursors; throws when they cannot be opened (the cursor database,
    /// or the shared state's takeover).
    package static func make(
        plan: DeliveryPlan,
        cursors: any TermState,
        config: BridgeConfig,
        routes: [SubscriptionRoute],
        api: DirectusAPI,
        inboxes: [SinkInbox],
        health: HealthState,
        registry: MetricsRegistry,
        pipelineMetrics: PipelineMetrics,
        stats: StatsReporter,
        logger: Logger
    ) async throws -> ActivityService {
        guard plan.mode == .activity else { return .live }
        let sinkIDs = inboxes.map(\.sinkID)
        let renames = SinkCatalog.renames(of: config.sinks)
        let (stores, opened) = try await BlockingExecutor.shared.perform {
            () throws -> ([String: CursorStore], TermCursors) in
            let opened = try cursors.openCursors(sinks: sinkIDs, renames: renames, logger: logger)
            let stores = try Dictionary(
                uniqueKeysWithValues: sinkIDs.map { ($0, try CursorStore(backend: opened.backend, sink: $0)) })
            return (stores, opened)
        }
        let subscriptions = routes.filter { $0.handling == .trigger }.compactMap { route -> ActivitySubscription? in
            guard let configured = config.subscriptions.first(where: { $0.uid == route.uid }) else { return nil }
            return ActivitySubscription(configured, primaryKey: route.primaryKey, among: config.subscriptions)
        }
        let allStores = Array(stores.values)
        let metrics = ActivityMetrics(registry: registry) { allStores.compactMap { $0.cursor?.committed }.min() }
        for (sink, store) in stores { registerSinkGauges(sink: sink, store: store, metrics: metrics, registry: registry) }
        health.setSinkLag { stores.mapValues { metrics.lag(of: $0) } }
        let source = DirectusActivitySource(api: api, report: { metrics.report($0, logger: logger) }) { error in
            logger.warning(
                "directus_revisions is not readable: events carry no delta and deleted items no snapshot; grant "
                    + "the bridge user's role read access to directus_revisions",
                metadata: [LogKey.error: error.description]
            )
        }
        stats.addGauge("activity.lag") { metrics.lag }
        let reconnect = config.directus.reconnect
        let settings = ActivityReaderSettings(
            pollInterval: config.delivery.pollInterval,
            retryDelay: reconnect.initialDelay,
            maxRetryDelay: reconnect.maxDelay,
            progressInterval: config.log.progressInterval
        )
        var readers: [ActivityReader] = []
        var wakeups: [ActivityWakeup] = []
        for inbox in inboxes {
            guard let store = stores[inbox.sinkID] else { continue }
            let wakeup = ActivityWakeup()
            wakeups.append(wakeup)
            readers.append(
                ActivityReader(
                    settings: settings,
                    sinkID: inbox.sinkID,
                    subscriptions: subscriptions,
                    source: source,
                    store: store,
                    queue: inbox.queue,
                    wakeup: wakeup,
                    health: health,
                    metrics: metrics,
                    pipelineMetrics: pipelineMetrics,
                    logger: logger.child(label: "activity", metadata: [LogKey.sink: inbox.sinkID])
                ))
        }
        let watcher = ResyncRequestWatcher(
            source: opened.resyncRequests, readers: Dictionary(uniqueKeysWithValues: readers.map { ($0.sinkID, $0) }),
            stores: stores, logger: logger)
        return ActivityService(
            trigger: TriggerFanOut.of(wakeups), readers: readers, stores: stores, resyncWatcher: watcher,
            cursorFile: opened.cursorFile)
    }

    /// `directus_bridge_sink_cursor{sink}` and `directus_bridge_sink_lag_rows{sink}`.
    private static func registerSinkGauges(
        sink: String, store: CursorStore, metrics: ActivityMetrics, registry: MetricsRegistry
    ) {
        registry.gaugeFunction(
            "directus_bridge_sink_cursor", help: "Activity id up to which the sink accepted every change (its cursor).",
            labels: [("sink", sink)]
        ) { Double(store.cursor?.committed ?? 0) }
        registry.gaugeFunction(
            "directus_bridge_sink_lag_rows", help: "Activity rows between the newest id seen and the sink's cursor.",
            labels: [("sink", sink)]
        ) { Double(metrics.lag(of: store)) }
    }

    /// Runs every sink's reader until `stop` (returns at once in live mode).
    public func run(stop: ShutdownSignal) async {
        await withTaskGroup(of: Void.self) { group in
            for reader in readers { group.addTask { await reader.run(stop: stop) } }
            if let resyncWatcher { group.addTask { await resyncWatcher.run(stop: stop) } }
        }
    }
}
