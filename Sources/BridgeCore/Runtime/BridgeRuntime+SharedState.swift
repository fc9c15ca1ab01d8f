internal import BridgeActivity
internal import BridgeConfig
internal import BridgeEvents
internal import BridgeNATS
internal import BridgeSinks
internal import BridgeSystem

extension BridgeRuntime {
    /// `state.backend: jetstream` (docs/ARCHITECTURE.md "Shared state, lease and fencing"): connect to the bucket,
    /// keep or wait for the lease, and run one term of the whole bridge (`runTerm`) each time this bridge becomes
    /// active. A term ends when the lease is lost (a renewal that could not be made in time, or another bridge's
    /// write found by a compare-and-set): reading and delivering stop, `/readyz` says `standby`, and the next term
    /// starts from the shared cursors once the lease is held again. The lease is released only after the last term
    /// has drained, so that a standby never delivers beside this bridge.
    func runShared(_ first: RuntimeComponents, sinks: SharedSinkState, stop: ShutdownSignal) async -> RuntimeOutcome {
        let state = config.state
        let log = logger.child(label: "state")
        first.health.update { $0.standby = true }
        var backoff = Backoff(initialDelay: .milliseconds(250), maxDelay: config.directus.reconnect.maxDelay)
        let settings = NATSSettings(servers: state.servers, name: "directus-bridge-state")
        let bucket = KeyValueSettings(bucket: state.bucket, replicas: state.servers.count >= 3 ? 3 : 1)
        let opened = await retrying(until: stop, backoff: &backoff) {
            () async throws -> (NATSConnection, KeyValueStore) in
            let connection = try await NATSConnection.connect(settings: settings, logger: log)
            do {
                return (connection, try await KeyValueStore.open(connection: connection, settings: bucket))
            } catch {
                await connection.close()
                throw error
            }
        } failed: { error, delay in
            if let error = error as? NATSError, error.kind == .configuration || error.kind == .authentication {
                log.error("the shared state store refused the bridge", metadata: [LogKey.error: error.description])
            } else {
                log.warning(
                    "shared state store unreachable; retrying",
                    metadata: [LogKey.error: "\(error)", LogKey.delay: delay]
                )
            }
            return delay
        }
        guard let (connection, store) = opened else { return .cleanShutdown }
        let keys = SharedStateKeys(name: state.name)
        let keeper = LeaseKeeper(
            store: store,
            keys: keys,
            lease: state.lease,
            registry: first.registry,
            health: first.health,
            logger: log
        )
        log.info(
            "waiting for the lease",
            metadata: [
                "state.bucket": state.bucket, "state.name": state.name,
                "lease.holder": keeper.holder,
            ]
        )
        // The keeper has a stop of its own: it releases the lease only after the last term drained.
        let keeperStop = ShutdownSignal()
        async let keeping: Void = keeper.run(stop: keeperStop)
        let outcome = await runTerms(
            first,
            sinks: sinks,
            store: store,
            keys: keys,
            keeper: keeper,
            stop: stop,
            log: log
        )
        keeperStop.trigger()
        await keeping
        await connection.close()
        return outcome
    }

    private func runTerms(
        _ first: RuntimeComponents,
        sinks: SharedSinkState,
        store: KeyValueStore,
        keys: SharedStateKeys,
        keeper: LeaseKeeper,
        stop: ShutdownSignal,
        log: Logger
    ) async -> RuntimeOutcome {
        var components = first
        defer { components.closeFiles() }  // the last term's; `run` closes the first's
        while await keeper.waitUntilActive(stop: stop) {
            let generation = keeper.roleGeneration
            let term = ShutdownSignal()
            let backend = SharedCursorBackend(
                store: store,
                keys: keys,
                holder: keeper.holder,
                logger: log,
                fenced: { [keeper] reason in keeper.fenced(reason) }
            )
            sinks.begin(SharedSinkState.Term(store: store, keys: keys, writer: backend))
            // The term ends at the process's stop or when the lease is lost; a `resync` written meanwhile is taken
            // within it (`SharedCursorBackend.resyncRequests`).
            async let ended: Void = {
                await keeper.waitUntilStandby(since: generation, stop: term)
                term.trigger()
            }()
            async let stopped: Void = {
                await Self.either(stop, term)
                term.trigger()
            }()
            let outcome = await runTerm(
                components,
                term: SharedTermState(cursors: backend, keeper: keeper),
                stop: term
            )
            term.trigger()
            await ended
            await stopped
            if stop.isTriggered {
                // Stopping while the lease ran out (the state servers gone during the drain): the runners ended as
                // they must, which is no failure of the process.
                if case .failure = outcome, !keeper.mayDeliver() { return .cleanShutdown }
                return outcome
            }
            if keeper.mayDeliver() {
                // Still the lease holder: the term ended for a reason of its own (credentials refused, a sink that
                // failed for good, a configuration problem), which ends the process as it would without sharing.
                return outcome
            }
            // Back to standby: the next term gets fresh sinks and inboxes, around the same metrics and health.
            components.health.update { health in
                health.shuttingDown = false
                health.connected = false
                health.liveSubscriptions = []
                health.stuckSinks = [:]
            }
            components.closeFiles()
            do {
                components = try await RuntimeComponents.build(
                    config: config,
                    version: version,
                    commit: commit,
                    logHandler: logHandler,
                    reopenRequests: first.reopenRequests,
                    logger: logger,
                    registry: first.registry,
                    health: first.health,
                    sinkState: sinks,
                    stateKeeper: first.stateKeeper
                )
            } catch {
                return error
            }
        }
        return .cleanShutdown
    }

    /// Returns once `first` or `second` is triggered.
    private static func either(_ first: ShutdownSignal, _ second: ShutdownSignal) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await first.wait() }
            group.addTask { await second.wait() }
            await group.next()
            group.cancelAll()
        }
    }
}
