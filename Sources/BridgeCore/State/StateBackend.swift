internal import BridgeConfig
package import BridgeEvents
package import BridgeSinks
package import BridgeSystem

/// Where the bridge keeps its progress (`state.backend`, docs/ARCHITECTURE.md "State backend"): the sinks' cursors,
/// the dead letters, the role (a lease with shared state) and what `status` reads. `StateBackends.make` picks one of
/// the two implementations once per process — `LocalStateBackend` (SQLite in `delivery.state_dir`) or
/// `SharedStateBackend` (a JetStream key-value bucket); the runtime, the sinks and the commands ask it and never
/// test which one it is (`Tests/tools/test_state_backend_branches.py` keeps it so).
package protocol StateBackend: Sendable {
    /// How messages name where the state lives: `delivery.state_dir`'s path, or the shared bucket.
    var place: String { get }
    /// The backend as the sinks see it (`SinkContext.state`), one value for the whole process.
    var sinks: any SinkState { get }
    /// Transport risks of reaching the state (`TransportPolicy`).
    var transportRisks: [TransportPolicy.Risk] { get }

    /// `run`, once the operations endpoint is up: the bridge's terms (`BridgeRuntime.runTerm`) — one from start to
    /// stop, or one each time this bridge holds the lease — with `first` the components built at start.
    func run(_ runtime: BridgeRuntime, first: RuntimeComponents, stop: ShutdownSignal) async -> RuntimeOutcome
    /// `status`: what is stored now; never creates or changes anything.
    func read() async throws -> StoredState
    /// `resync`: records that subscription `uid` is snapshotted again for `sinks` (nil: every sink; `named`: the
    /// sink as the operator named it); the sinks configured now are `configured`, whose former ids `renames` maps.
    func requestResync(uid: String, sinks: [String]?, named: String?, configured: [String], renames: SinkRenames)
        async -> StateCommandOutcome
    /// `dlq`: does `work` on the dead letters. Nil letters in the result: none were ever stored here.
    func deadLetters(_ work: DeadLetterWork) async throws -> DeadLetterWork.Result
    /// `check`: whether the state can be reached and who holds the role; nil when there is nothing to reach.
    func check(logger: Logger) async -> CheckResult?
}

/// What a state command (`resync`) achieved: a line for stderr and how the process exits.
package enum StateCommandOutcome: Sendable, Equatable {
    /// Done (exit 0).
    case done(String)
    /// Not done, for a reason that may pass (exit 1).
    case failed(String)
    /// Not done until the operator changes something (exit 78).
    case configurationProblem(String)
}

/// `dlq`'s work on the dead letters, wherever they are kept.
package struct DeadLetterWork: Sendable {
    /// The letters acted on (listed, replayed or purged).
    package var apply: @Sendable (any DeadLetterStore) throws -> [DeadLetter]
    /// `list`: only reads (a file this process may not write is opened read-only).
    package var readOnly: Bool
    /// `--dry-run`, or `list`: nothing changes.
    package var dryRun: Bool
    /// Sinks no longer configured whose replayed events nobody would deliver: dropped (counted with `dryRun`).
    package var dropSinks: [String]

    /// Creates the work.
    package init(
        readOnly: Bool, dryRun: Bool, dropSinks: [String],
        apply: @escaping @Sendable (any DeadLetterStore) throws -> [DeadLetter]
    ) {
        self.apply = apply
        self.readOnly = readOnly
        self.dryRun = dryRun
        self.dropSinks = dropSinks
    }

    /// What the work did.
    package struct Result: Sendable {
        /// The letters acted on; nil when no dead letters were ever stored (`missing` says why).
        package var letters: [DeadLetter]?
        /// Replayed events of `dropSinks` dropped (or, dry, found).
        package var dropped: Int
        /// Why there are no letters, for the operator (with nil `letters`).
        package var missing: String
        /// Where `replay` put the letters and who delivers them (`replayed N dead letters: ...`).
        package var replayed: String
        /// Where the dropped replayed events waited (`dropped N events ... for sinks no longer in the config`).
        package var droppedFrom: String
    }
}
