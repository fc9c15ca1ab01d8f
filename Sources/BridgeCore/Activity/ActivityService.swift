public import BridgeConfig
public import BridgeSystem

/// Activity mode's part of `run`: opens the cursor store (and connects it as the dispatcher's recorder), builds the
/// wake-up the socket reader triggers, and runs the activity reader. In live mode it does nothing.
public struct ActivityService: Sendable {
    /// What the socket reader calls for subscriptions in activity mode (nil in live mode).
    public let trigger: (any ActivityTrigger)?
    private let reader: ActivityReader?

    private init(trigger: (any ActivityTrigger)?, reader: ActivityReader?) {
        self.trigger = trigger
        self.reader = reader
    }

    /// Nothing to run: live mode.
    public static let live = ActivityService(trigger: nil, reader: nil)

    /// Builds the service for `plan`; throws when the cursor store cannot be opened.
    public static func make(
        plan: DeliveryPlan,
        config: BridgeConfig,
        routes: [SubscriptionRoute],
        api: DirectusAPI,
        queue: EventQueue,
        health: HealthState,
        registry: MetricsRegistry,
        pipelineMetrics: PipelineMetrics,
        stats: StatsReporter,
        recorder: DeferredProgressRecorder,
        logger: Logger
    ) async throws -> ActivityService {
        guard plan.mode == .activity else { return .live }
        let directory = config.delivery.stateDir
        let store = try await BlockingExecutor.shared.perform { try CursorStore(directory: directory) }
        recorder.connect(store)
        let subscriptions = routes.filter { $0.handling == .trigger }.compactMap { route -> ActivitySubscription? in
            guard let configured = config.subscriptions.first(where: { $0.uid == route.uid }) else { return nil }
            return ActivitySubscription(configured, primaryKey: route.primaryKey, among: config.subscriptions)
        }
        let wakeup = ActivityWakeup()
        let metrics = ActivityMetrics(registry: registry) { store.cursor?.committed }
        let source = DirectusActivitySource(api: api, report: { metrics.report($0, logger: logger) }) { error in
            logger.warning(
                "directus_revisions is not readable: events carry no delta and deleted items no snapshot; grant "
                    + "the bridge user's role read access to directus_revisions",
                metadata: [LogKey.error: error.description]
            )
        }
        stats.addGauge("activity.lag") { metrics.lag }
        let reconnect = config.directus.reconnect
        let reader = ActivityReader(
            settings: ActivityReaderSettings(
                pollInterval: config.delivery.pollInterval,
                retryDelay: reconnect.initialDelay,
                maxRetryDelay: reconnect.maxDelay
            ),
            subscriptions: subscriptions,
            source: source,
            store: store,
            queue: queue,
            wakeup: wakeup,
            health: health,
            metrics: metrics,
            pipelineMetrics: pipelineMetrics,
            logger: logger
        )
        return ActivityService(trigger: wakeup, reader: reader)
    }

    /// Runs the reader until `stop` (returns at once in live mode).
    public func run(stop: ShutdownSignal) async {
        await reader?.run(stop: stop)
    }
}
