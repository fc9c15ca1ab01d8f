package import BridgeConfig
package import BridgeEvents
internal import BridgeActivity
internal import BridgeNATS
package import BridgeSinks
package import BridgeSystem

/// `state.backend: jetstream`: cursors, dead letters and the lease in a JetStream key-value bucket on
/// `state.servers` (docs/ARCHITECTURE.md "Shared state, lease and fencing"), so that one of several bridges
/// delivers and another takes over from the shared cursors when it stops. The commands reach the bucket without ever
/// creating it (`SharedBucketAccess`).
package struct SharedStateBackend: StateBackend {
    /// `state`.
    package var state: StateConfig
    /// `delivery.state_dir`: the webhook outbox stays on this machine.
    package var stateDir: String
    /// The bucket as this process's sinks see it, handed over at the start of each term.
    private let sinkState = SharedSinkState()

    /// The backend of `state`, with this machine's outbox in `stateDir`.
    package init(state: StateConfig, stateDir: String) {
        self.state = state
        self.stateDir = stateDir
    }

    package var place: String { "the shared state (bucket \(state.bucket))" }
    package var sinks: any SinkState { sinkState }

    package var transportRisks: [TransportPolicy.Risk] {
        guard var risk = TransportRisk.nats(servers: state.servers, credentials: false, tls: false) else { return [] }
        risk.field = "state.servers"
        return [risk]
    }

    package func run(_ runtime: BridgeRuntime, first: RuntimeComponents, stop: ShutdownSignal) async -> RuntimeOutcome {
        await runtime.runShared(first, sinks: sinkState, stop: stop)
    }

    package func read() async throws -> StoredState {
        let bucket = state.bucket
        return try await SharedBucketAccess.withBucket(state, client: "directus-bridge-status", logger: .silent) {
            try SharedStateReader(store: $0, keys: $1, bucket: bucket).read()
        }
    }

    /// The request goes into the bucket (`<name>.resync.<uid>`); the active bridge takes it within seconds (with none
    /// active, the next one to start does) and snapshots the subscription again.
    package func requestResync(
        uid: String, sinks: [String]?, named: String?, configured: [String], renames: SinkRenames
    ) async -> StateCommandOutcome {
        do {
            let recorded = try await SharedBucketAccess.withBucket(
                state, client: "directus-bridge-resync", logger: .silent
            ) { store, keys in
                try store.map { try SharedResyncRequest.record(uid: uid, sinks: sinks, in: $0, keys: keys) } != nil
            }
            guard recorded else {
                return .failed(
                    "directus-bridge: resync: the bucket \(state.bucket) does not exist yet: no bridge has started, "
                        + "and the first one starts each subscription as configured")
            }
        } catch {
            return .failed("directus-bridge: resync: cannot write to the shared state: \(error)")
        }
        return .done(
            "resync of \"\(uid)\" recorded in the shared state (bucket \(state.bucket), name \(state.name)): the "
                + "active bridge snapshots it again from a fresh watermark within seconds, then streams on (with none "
                + "active, the next one to start does)")
    }

    /// The letters in the bucket, whichever machine's bridge wrote them; `replay` marks them there and the active
    /// bridge takes them in. Dropping a removed sink's replays also drops those the active bridge already took into
    /// this machine's outbox.
    package func deadLetters(_ work: DeadLetterWork) async throws -> DeadLetterWork.Result {
        let outcome = try await SharedBucketAccess.withBucket(
            state, client: "directus-bridge-dlq", logger: .silent
        ) { store, keys in
            try store.map { store in
                let bucket = BucketDeadLetters(store: store, keys: keys)
                let letters = try work.apply(bucket)
                let dropped =
                    try work.dropSinks.isEmpty ? 0 : bucket.dropMarked(sinks: work.dropSinks, dryRun: work.dryRun)
                return (letters, dropped)
            }
        }
        var dropped = outcome?.1 ?? 0
        // Letters the active bridge took into its outbox here before the sink was removed wait in that file.
        if !work.dropSinks.isEmpty, let path = OutboxStore.existingPath(stateDir: stateDir) {
            dropped += try await BlockingExecutor.shared.perform {
                try LocalStateBackend.dropOutbox(of: work.dropSinks, in: OutboxStore(path: path), dryRun: work.dryRun)
            }
        }
        return DeadLetterWork.Result(
            letters: outcome?.0, dropped: dropped,
            missing: "no dead letters (the bucket \(state.bucket) does not exist yet)",
            replayed: "marked in the shared state, the active bridge delivers them",
            droppedFrom: "replayed (in the shared state or this machine's outbox) for")
    }

    /// The state servers answer, the bucket exists (or will be created by the first bridge), and who holds the
    /// lease. Never creates the bucket or writes a key.
    package func check(logger: Logger) async -> CheckResult? {
        let name = "shared state \(state.bucket)/\(state.name)"
        do {
            let lease = try await SharedBucketAccess.withBucket(
                state, client: "directus-bridge-check", logger: logger
            ) { store, keys in try store.map { try $0.entry(keys.lease) } }
            guard let lease else {
                return .ok(name, "the bucket does not exist yet; the first bridge to start creates it")
            }
            return .ok(name, SharedStateReader.describeLease(lease))
        } catch let error as SharedBucketAccess.Unreachable {
            return .fail(
                name, error.description,
                remedy: "check state.servers and that nats-server runs, with JetStream, and is reachable from this host")
        } catch {
            return .fail(name, "cannot read the bucket: \(error)", remedy: "see the error")
        }
    }
}
