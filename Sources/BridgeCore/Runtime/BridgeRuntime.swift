public import BridgeConfig
internal import BridgeHTTP
internal import BridgeHTTPServer
internal import BridgeJSON
public import BridgeSystem
internal import BridgeTLS
internal import BridgeWebSocket
public import BridgeEvents
internal import BridgeDirectus
internal import BridgeActivity
internal import BridgeSinks
internal import BridgeStore

/// The `run` command's service: wires configuration, Directus session, the sinks with their inboxes and runners,
/// runs them until SIGINT/SIGTERM, then shuts down in order — stop intake (unsubscribe, close 1000), drain each
/// inbox into its sink, flush — within `shutdown_timeout`.
public final class BridgeRuntime: Sendable {
    let config: BridgeConfig
    let logHandler: StderrLogHandler
    let logger: Logger
    let version: String
    let commit: String
    /// Where the progress lives (`state.backend`), chosen once for the process.
    let state: any StateBackend

    /// Creates the runtime for a validated config; `version` goes into logs and the user agent, `version` and
    /// `commit` into the `directus_bridge_build_info` metric.
    public init(
        config: BridgeConfig, version: String, commit: String = "unknown", logHandler: StderrLogHandler, logger: Logger
    ) {
        self.config = config
        self.version = version
        self.commit = commit
        self.logHandler = logHandler
        self.logger = logger
        self.state = StateBackends.make(config)
    }

    /// Runs the bridge until a signal ends it.
    public func run() async -> RuntimeOutcome {
        ignoreSIGPIPE()
        let stop = ShutdownSignal()
        // Signals are handled from here on: a supervisor may signal as soon as it sees the first log line.
        let reopenRequests = ReopenRequests()
        let signals: SignalHandlers
        do {
            signals = try SignalHandlers(stop: stop, reopen: reopenRequests, logger: logger)
        } catch {
            return .failure("cannot start the signal handling thread: \(error)")
        }
        defer { signals.cancel() }
        let stateKeeper: StateDirectoryKeeper?
        do {
            stateKeeper = try claimStateDirectory().map { StateDirectoryKeeper(lock: $0, stop: stop, logger: logger) }
        } catch {
            return .configurationProblem(error.description)
        }
        let components: RuntimeComponents
        do {
            components = try await RuntimeComponents.build(
                config: config, version: version, commit: commit, logHandler: logHandler,
                reopenRequests: reopenRequests, logger: logger, sinkState: state.sinks, stateKeeper: stateKeeper)
        } catch {
            return error
        }
        defer { components.closeFiles() }
        logger.info(
            "starting", metadata: [
                "version": components.version, "commit": commit, LogKey.url: config.directus.url.shown,
                "http.listen": config.http.listen?.description ?? "off",
                LogKey.mode: config.delivery.mode.rawValue,
                // Each by its id (its name, else its position's id) as every later line names it, then its summary.
                "sinks": zip(SinkCatalog.identities(of: config.sinks), config.sinks)
                    .map { "\($0) (\($1.settings.summary))" }.joined(separator: ", "),
                "subscriptions.all": config.subscriptions.map(\.uid).joined(separator: ","),
            ])
        for warning in StartupWarnings.all(config) { logger.warning(warning.message, metadata: warning.metadata) }
        // Operations endpoint (http.listen): up before authenticating, so /readyz can say why it is not ready yet.
        let operations: OperationsServer.Start
        do {
            operations = try await OperationsServer.start(
                config.http, registry: components.registry, health: components.health,
                redactor: Redactor(secrets: config.allSecrets), logger: logger.child(label: "http"))
        } catch {
            return error
        }
        let server: HTTPServer? = if case .listening(let listening) = operations { listening } else { nil }
        // Not a `defer`: the stop joins libmicrohttpd's threads, so it is awaited on the blocking executor
        // (`HTTPServer.close`), after the run, whatever its outcome, and before the process exits.
        let outcome = await withTaskGroup(of: Void.self) { group in
            if case .waiting(let binding, let failure) = operations {
                // Another process holds the port: the bridge works on while the endpoint keeps trying.
                let logger = logger.child(label: "http")
                group.addTask {
                    await OperationsServer.keepListening(binding, after: failure, stop: stop, logger: logger)
                }
            }
            let outcome = await state.run(self, first: components, stop: stop)
            group.cancelAll()  // the endpoint that kept trying stops serving with the run, as `server` does
            return outcome
        }
        await server?.close()
        // Another bridge took the state directory: this one stopped as on SIGTERM, and exits as its start would have.
        return stateKeeper?.lostClaim ?? outcome
    }

    /// Claims `delivery.state_dir` when this run keeps state there: cursors (activity mode, or `auto`, which may
    /// resolve to it) or a sink's own state. A live-mode bridge with only stateless sinks never touches the
    /// directory, so it may stay unwritable (a read-only root file system).
    private func claimStateDirectory() throws(StateDirectoryLock.Failure) -> StateDirectoryLock? {
        guard config.delivery.mode != .live || SinkCatalog.keepLocalState(config.sinks) else { return nil }
        return try StateDirectoryLock(directory: config.delivery.stateDir)
    }

    /// Everything after the operations endpoint is up, until `stop`: authenticate, resolve the delivery mode, plan
    /// the subscriptions, open the cursors and serve. With shared state this is one term of being active.
    func runTerm(_ components: RuntimeComponents, term: any TermState, stop: ShutdownSignal) async -> RuntimeOutcome {
        let permit = term.permit
        // Start-up: authenticate (retrying while Directus is unreachable; exit 77 when it refuses us).
        if let outcome = await authenticate(components, stop: stop) { return outcome }
        // What Directus says of itself: its QUERY_LIMIT_MAX before the first read that sends a `limit`, and its
        // heartbeat below. Unreadable (an old server), both stay unknown.
        let info = try? await components.api.get("/server/info")["data"]
        if let maximum = components.api.rowLimit.learn(info: info) {
            logger.info(
                "Directus answers a read with at most this many rows (QUERY_LIMIT_MAX); the bridge asks for no more",
                metadata: ["directus.query_limit_max": maximum])
        }
        // Activity or live delivery (Activity/DeliveryModeResolver.swift): exit 77 for `activity` without access.
        let delivery: DeliveryPlan
        switch await DeliveryModeResolver.resolve(
            config: config, api: components.api, registry: components.registry,
            retryDelay: config.directus.reconnect.initialDelay, stop: stop, logger: logger)
        {
        case nil: return .cleanShutdown
        case .failure(let outcome)?: return outcome
        case .success(let plan)?: delivery = plan
        }
        if let refusal = term.refusal(of: delivery.mode) { return refusal }
        guard
            let routes = await SubscriptionPlanner.plan(
                subscriptions: config.subscriptions, api: components.api, handling: delivery.handling(for:),
                retryDelay: config.directus.reconnect.initialDelay, stop: stop, logger: logger)
        else { return .cleanShutdown }
        let activity: ActivityService
        do {
            activity = try await ActivityService.make(
                plan: delivery, cursors: term, config: config, routes: routes, api: components.api,
                inboxes: components.inboxes.inboxes, health: components.health, registry: components.registry,
                pipelineMetrics: components.pipelineMetrics, stats: components.stats,
                logger: logger.child(label: "activity"))
        } catch let error as FencedError {
            return .failure(error.description)  // another bridge took over while this one started: standby again
        } catch {
            return term.failedToOpen(error)
        }
        defer { activity.closeFiles(logger: logger) }
        logger.info(
            "delivery mode", metadata: [LogKey.mode: delivery.mode.rawValue,
                "subscriptions.activity": delivery.activityUIDs.sorted().joined(separator: ",")])
        if delivery.mode == .live {
            logger.warning(DeliveryGuarantee.live)
        } else {
            logger.info(DeliveryGuarantee.activity)
        }
        guard
            let sorting = await SortService.make(
                config: config, routes: routes, api: components.api, sinks: components.inboxes,
                metrics: components.pipelineMetrics, stop: stop, logger: logger.child(label: "sort"))
        else { return .cleanShutdown }

        // The interval Directus really pings at decides when a silent connection is dead (§14.4).
        let heartbeat = ServerHeartbeat(info: info)
        heartbeat.log(bridgeHeartbeat: config.directus.heartbeat, to: logger)
        var realtime = components.supervisorSettings
        realtime.deadAfter = heartbeat.deadAfter(bridgeHeartbeat: config.directus.heartbeat)

        return await serve(
            components, realtime: realtime, routes: routes, activity: activity, sorting: sorting, permit: permit,
            stop: stop)
    }

    private func authenticate(_ components: RuntimeComponents, stop: ShutdownSignal) async -> RuntimeOutcome? {
        var backoff = Backoff(
            initialDelay: config.directus.reconnect.initialDelay, maxDelay: config.directus.reconnect.maxDelay)
        let started = await retrying(until: stop, backoff: &backoff) { () async throws -> RuntimeOutcome? in
            do throws(DirectusError) {
                try await components.auth.start()
                components.health.update { $0.authenticated = true }
                return nil
            } catch where error.isCredentialsRejected {
                logger.error("Directus rejected the credentials", metadata: [LogKey.error: error.description])
                return .credentialsRejected(error.description)
            }
        } failed: { error, delay in
            if let error = error as? DirectusError, error.isTLSFailure {
                // Not an outage: the certificate is not trusted (or TLS cannot be agreed). Retried all the same,
                // since the server's certificate or the CA file may be fixed while the bridge runs.
                logger.error(
                    "TLS with Directus failed, most likely its certificate is not trusted: set directus.tls.ca_file "
                        + "to the CA that signed it; retrying",
                    metadata: [LogKey.error: error.description, LogKey.delay: delay])
            } else {
                logger.warning(
                    "Directus unreachable; retrying", metadata: [LogKey.error: "\(error)", LogKey.delay: delay])
            }
            return delay
        }
        guard let started else { return .cleanShutdown }
        return started
    }

    private func serve(
        _ components: RuntimeComponents, realtime: RealtimeSupervisor.Settings, routes: [SubscriptionRoute],
        activity: ActivityService, sorting: SortService, permit: (any DeliveryPermit)?, stop: ShutdownSignal
    ) async -> RuntimeOutcome {
        let group = ServiceGroup(
            services: [ClosureService("stats") { await components.stats.run(stop: $0) }]
                + components.sinks.map { sink in ClosureService(sink.id) { try await sink.connector.run(until: $0) } }
                + [
                    pipeline(components, activity: activity, permit: permit),
                    intake(components, realtime: realtime, routes: routes, activity: activity, sorting: sorting),
                ],
            gracefulTimeout: config.shutdownTimeout,
            logger: logger
        )
        let failures = await group.run(trigger: stop)
        await components.auth.logout()
        if let failure = failures.first {
            if let permit, !permit.mayDeliver() {
                // Shared state: the lease was lost (the keeper logged why); the sinks' runners ended as they must.
                logger.info("stopped reading and delivering: this bridge no longer holds the lease")
                return .failure(failure.description)
            }
            logger.error("stopped because a part of the bridge failed", metadata: [LogKey.error: failure.description])
            return .failure(failure.description)
        }
        logger.info("stopped")
        return .cleanShutdown
    }

    /// Reading Directus: the socket (live events and activity wake-ups), token renewal, the activity reader and
    /// the manual-sort reads. Asked to stop first: readiness goes 503, the socket unsubscribes and closes with 1000.
    private func intake(
        _ components: RuntimeComponents, realtime: RealtimeSupervisor.Settings, routes: [SubscriptionRoute],
        activity: ActivityService, sorting: SortService
    ) -> ClosureService {
        let supervisor = RealtimeSupervisor(
            settings: realtime, routes: routes, auth: components.auth, sinks: components.inboxes,
            trigger: TriggerFanOut.of(activity.trigger, sorting.trigger), health: components.health,
            metrics: components.pipelineMetrics,
            reconnects: components.countReconnect, logger: logger.child(label: "realtime"))
        let refresher = TokenRefresher(
            auth: components.auth, health: components.health, retryDelay: config.directus.reconnect.maxDelay,
            logger: logger.child(label: "auth"))
        let health = components.health
        return ClosureService("intake") { shutdown in
            async let marked: Void = {
                await shutdown.wait()
                health.update { $0.shuttingDown = true }  // /readyz answers 503 while draining
            }()
            async let realtime: Void = supervisor.run(stop: shutdown)
            async let tokens: Void = refresher.run(stop: shutdown)
            async let reader: Void = activity.run(stop: shutdown)
            async let sorts: Void = sorting.run(stop: shutdown)
            _ = await (marked, realtime, tokens, reader, sorts)
        }
    }

    /// The sinks' runners, a task on a thread of its own each, from each sink's inbox to the sink: asked to stop once the intake stopped,
    /// they drain their inboxes into the sinks and close them; forced, they abandon their retries and are no longer
    /// waited for (a write to a pipe nobody reads cannot be interrupted, and must not hold the process).
    private func pipeline(_ components: RuntimeComponents, activity: ActivityService, permit: (any DeliveryPermit)?)
        -> ClosureService
    {
        let inboxes = components.inboxes
        let housekeeping: @Sendable () -> Void = {
            components.stateKeeper?.check(files: [
                (CursorDatabase.fileName, { try activity.keepCursorFileAtPath() }),
                (OutboxStore.fileName, { try components.outbox?.keepAtPath() }),
            ])
        }
        let runners = zip(components.sinks, inboxes.inboxes).map { sink, inbox in
            SinkRunner(
                sink: sink, inbox: inbox, recorder: activity.recorder(for: sink.id),
                metrics: components.pipelineMetrics, health: components.health,
                reopenRequests: components.reopenRequests, logger: logger.child(label: "pipeline"), permit: permit,
                housekeeping: housekeeping)
        }
        return ClosureService("pipeline") { shutdown in
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    await shutdown.wait()  // also returns when cancelled
                    inboxes.close()
                    return false
                }
                for runner in runners {
                    group.addTask {
                        // Ends when the inbox is closed and drained, or with a sink error that retrying cannot mend.
                        try await runner.runOnOwnThread()
                        return true
                    }
                }
                // Wait for the runners themselves: the inboxes' closing is only the signal to drain.
                var running = runners.count
                while running > 0, let runnerEnded = try await group.next() {
                    if runnerEnded { running -= 1 }
                }
                group.cancelAll()
            }
        }
    }
}
