package import BridgeConfig
internal import BridgeHTTP
internal import BridgeJSON
package import BridgeSystem
internal import BridgeTLS
internal import BridgeWebSocket
package import BridgeEvents
package import BridgeDirectus
internal import BridgeActivity
package import BridgeSinks

/// Everything `run` builds from the config before it connects.
package struct RuntimeComponents: Sendable {
    package let registry: MetricsRegistry
    package let pipelineMetrics: PipelineMetrics
    package let health: HealthState
    package let api: DirectusAPI
    package let auth: AuthSession
    /// The sinks, each with its connector (their background work runs as services).
    package let sinks: [ConfiguredSink]
    /// Each sink's inbox, as what reads Directus sees them.
    package let inboxes: SinkFanOut
    /// SIGHUP's requests to reopen output files.
    package let reopenRequests: ReopenRequests
    package let supervisorSettings: RealtimeSupervisor.Settings
    package let countReconnect: @Sendable (String) -> Void
    package let version: String
    package let stats: StatsReporter
    /// What the sinks share (`webhooks.db` among it), closed by `closeFiles()`.
    private let sinkResources: SinkResources
    /// The watch over `delivery.state_dir` when this run claimed it (the same for every term).
    package let stateKeeper: StateDirectoryKeeper?

    /// `webhooks.db`, once a sink opened it.
    package var outbox: OutboxStore? { sinkResources.existing(OutboxFile.self)?.store }

    /// Builds the components, the sinks over `sinkState` (`StateBackend.sinks`); a later term of an active bridge
    /// (shared state) passes the process's `registry` and `health`, which the operations endpoint serves, to build
    /// fresh sinks and inboxes around them.
    package init(
        config: BridgeConfig, version: String, commit: String, logHandler: StderrLogHandler,
        reopenRequests: ReopenRequests, logger: Logger, registry: MetricsRegistry? = nil, health: HealthState? = nil,
        sinkState: any SinkState, stateKeeper: StateDirectoryKeeper? = nil
    ) throws(RuntimeOutcome) {
        self.reopenRequests = reopenRequests
        self.stateKeeper = stateKeeper
        let registry = registry ?? MetricsRegistry()
        self.registry = registry
        pipelineMetrics = PipelineMetrics(registry: registry)
        pipelineMetrics.prepare(collections: config.subscriptions.map(\.collection))
        self.health = health ?? HealthState(expectedSubscriptions: Set(config.subscriptions.map(\.uid)))
        self.version = version

        let directus = config.directus
        let http = HTTPClient(
            options: HTTPClientOptions(
                connectTimeout: directus.connectTimeout, requestTimeout: directus.requestTimeout,
                caFile: directus.tls.caFile, insecureSkipVerify: directus.tls.insecureSkipVerify,
                userAgent: "directus-bridge/\(version)", proxy: directus.proxy),
            logger: logger.child(label: "http"))
        let client = DirectusClient(baseURL: directus.restBaseURL, transport: http, timeout: directus.requestTimeout)
        let credentials: AuthSession.Credentials =
            switch directus.auth.credentials {
            case .token(let token): .staticToken(token)
            case .login(let email, let password, let otp): .login(email: email, password: password, otp: otp)
            case .none: .anonymous
            }
        let refreshes = registry.counter(
            "directus_bridge_auth_refreshes_total", help: "Access tokens renewed over REST.")
        auth = AuthSession(
            credentials: credentials, client: client, logger: logger.child(label: "auth"), refreshes: refreshes,
            redact: { logHandler.rotateSecret($0, kind: $1) })
        api = DirectusAPI(client: client, auth: auth)  // verification switched off is a TransportPolicy risk

        OperationsMetrics.register(in: registry, health: self.health, build: BuildInfo(version: version, commit: commit))
        stats = StatsReporter(
            interval: config.log.statsInterval, lag: pipelineMetrics.lagHistogram, logger: logger.child(label: "stats"))
        sinkResources = SinkResources()
        var sinkContext = SinkContext(
            index: 0, sinkID: "", encoder: .plain, stateDir: config.delivery.stateDir,
            userAgent: "directus-bridge/\(version)", shutdownTimeout: config.shutdownTimeout,
            registry: registry, stats: stats, logger: logger, shared: sinkResources)
        sinkContext.state = sinkState
        sinks = try SinkFactory.makeSinks(config.sinks, source: directus.restBaseURL, context: sinkContext)
        let pipelineMetrics = self.pipelineMetrics
        let inboxes = SinkFanOut(
            sinks.map { sink in
                SinkInbox(
                    sinkID: sink.id, capacity: config.delivery.maxQueue,
                    maxBytes: config.delivery.maxQueueBytes, registry: registry,
                    pipelineMetrics: pipelineMetrics, logger: logger.child(label: "pipeline"))
            })
        self.inboxes = inboxes
        registry.gaugeFunction(
            "directus_bridge_queue_depth", help: "Events waiting between Directus and a sink (the fullest sink queue)."
        ) { Double(inboxes.depth) }
        registry.gaugeFunction(
            "directus_bridge_queue_bytes",
            help: "Bytes of event lines waiting between Directus and a sink (the fullest sink queue)."
        ) { Double(inboxes.bytes) }
        stats.addGauge(StatsReporter.Key.queueDepth) { Double(inboxes.depth) }

        let authMode: RealtimeSessionStateMachine.AuthMode =
            switch directus.auth.mode {
            case .handshake: .handshake
            case .strict: .strict
            case .public: .publicAccess
            }
        supervisorSettings = RealtimeSupervisor.Settings(
            url: directus.websocketURL, authMode: authMode,
            options: WebSocketOptions(
                connectTimeout: directus.connectTimeout,
                tls: TLSConfiguration(caFile: directus.tls.caFile, insecureSkipVerify: directus.tls.insecureSkipVerify),
                // Directus answers every subscribe with an `init` of the first 100 items: one item over the limit
                // there would close the socket with 1009 again after every reconnect, for good (docs/RELIABILITY.md,
                // "Careless or hostile operators").
                skipsOversizedMessages: true,
                proxy: directus.proxy),
            heartbeat: directus.heartbeat, initialDelay: directus.reconnect.initialDelay,
            maxDelay: directus.reconnect.maxDelay, resetAfter: directus.reconnect.resetAfter)
        let reconnects = { @Sendable (reason: String) in
            registry.counter(
                "directus_bridge_reconnects_total", help: "Realtime reconnects by reason.",
                labels: [("reason", reason)])
        }
        for reason in RealtimeSupervisor.reconnectReasons { _ = reconnects(reason) }  // at 0 from the start
        countReconnect = { reason in reconnects(reason).increment() }
    }

    /// Closes the files the sinks share (`webhooks.db`) once their runners and connectors stopped: a checkpoint and
    /// no `-wal` left, whatever thread still holds a reference when the process exits (`SQLiteDatabase.close()`).
    /// Later calls from a sink abandoned at a forced shutdown fail; closing twice does nothing.
    package func closeFiles() {
        sinkResources.existing(OutboxFile.self)?.close()
    }

    /// Builds the components on a thread of the blocking pool, never on Swift's cooperative pool: the sinks' start-up
    /// blocks (`webhooks.db` opened and migrated, an NDJSON file opened, librdkafka asked about a Kafka sink's
    /// properties with a producer of its own).
    package static func build(
        config: BridgeConfig, version: String, commit: String, logHandler: StderrLogHandler,
        reopenRequests: ReopenRequests, logger: Logger, registry: MetricsRegistry? = nil, health: HealthState? = nil,
        sinkState: any SinkState, stateKeeper: StateDirectoryKeeper? = nil
    ) async throws(RuntimeOutcome) -> RuntimeComponents {
        do {
            return try await BlockingExecutor.shared.perform { () throws(RuntimeOutcome) -> RuntimeComponents in
                try RuntimeComponents(
                    config: config, version: version, commit: commit, logHandler: logHandler,
                    reopenRequests: reopenRequests, logger: logger, registry: registry, health: health,
                    sinkState: sinkState, stateKeeper: stateKeeper)
            }
        } catch let outcome as RuntimeOutcome {
            throw outcome
        } catch {
            throw .failure("cannot start the sinks: \(error)")  // no pool thread and no Dispatch worker could run it
        }
    }
}
