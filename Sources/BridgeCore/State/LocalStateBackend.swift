internal import BridgeConfig
package import BridgeEvents
internal import BridgeActivity
package import BridgeSinks
internal import BridgeStore
package import BridgeSystem

/// `state.backend: local`: SQLite in `delivery.state_dir` — `cursor.db` (cursors, resync requests) and `webhooks.db`
/// (the webhook outbox, every sink's dead letters) — claimed by one bridge (`StateDirectoryLock`), which is always
/// active: no lease.
package struct LocalStateBackend: StateBackend {
    /// `delivery.state_dir`.
    package var stateDir: String

    package var place: String { stateDir }
    package var sinks: any SinkState { LocalSinkState() }
    package var transportRisks: [TransportPolicy.Risk] { [] }

    package func run(_ runtime: BridgeRuntime, first: RuntimeComponents, stop: ShutdownSignal) async -> RuntimeOutcome {
        await runtime.runTerm(first, term: LocalTermState(stateDir: stateDir), stop: stop)
    }

    package func read() async throws -> StoredState {
        try LocalStateReader(stateDir: stateDir).read()
    }

    /// Written beside a running bridge (SQLite WAL), which acts on it within seconds (`ResyncRequestWatcher`).
    package func requestResync(
        uid: String, sinks: [String]?, named: String?, configured: [String], renames: SinkRenames
    ) async
        -> StateCommandOutcome
    {
        do {
            // The names' migration runs here too: opening the file removes progress under ids no longer configured.
            try CursorDatabase(directory: stateDir, sinks: configured, renames: renames)
                .requestResync(of: uid, sinks: sinks ?? configured)
        } catch let error as SQLiteError where error.isUnusableFile {
            // cursor.db read-only or damaged: the operator must act, as when `run` refuses it (exit 78).
            return .configurationProblem("directus-bridge: resync: cannot write the cursor store: \(error.reason)")
        } catch let error as UnsafePathError {
            // A state_dir another user controls: refused as `run` refuses it (exit 78).
            return .configurationProblem("directus-bridge: resync: delivery.state_dir: \(error)")
        } catch {
            return .failed("directus-bridge: resync: cannot write the cursor store: \(error)")
        }
        return .done(
            "resync of \"\(uid)\"\(named.map { " for sink \($0)" } ?? "") recorded in \(stateDir): a running "
                + "bridge snapshots it again from a fresh watermark within seconds, then streams on (a stopped one "
                + "at its next start)")
    }

    /// The `dead_letters` table of `webhooks.db`, changed beside a running bridge (WAL; a write waits up to 5 s for
    /// the bridge's lock) and synced to disk after a change; replayed letters go back into the outbox.
    package func deadLetters(_ work: DeadLetterWork) async throws -> DeadLetterWork.Result {
        var result = DeadLetterWork.Result(
            letters: nil, dropped: 0,
            missing: "no dead letters (\(stateDir)/\(OutboxStore.fileName) does not exist)",
            replayed: "back in the outbox, a running bridge (or the next run) delivers them",
            droppedFrom: "waiting in the outbox of")
        guard let path = OutboxStore.existingPath(stateDir: stateDir) else { return result }
        let (letters, dropped) = try await BlockingExecutor.shared.perform {
            let store = try Self.openStore(path, readOnly: work.readOnly)
            let letters = try work.apply(store)
            let dropped = try Self.dropOutbox(of: work.dropSinks, in: store, dryRun: work.dryRun)
            if !work.dryRun { try store.syncToDisk() }
            return (letters, dropped)
        }
        result.letters = letters
        result.dropped = dropped
        return result
    }

    package func check(logger: Logger) async -> CheckResult? { nil }

    /// The store at `path`; `readOnly` work reads a file this process may not write (read-only, as `status` does).
    private static func openStore(_ path: String, readOnly: Bool) throws -> OutboxStore {
        do {
            return try OutboxStore(path: path)
        } catch let error as SQLiteError where readOnly && (error.isReadOnly || error.cannotOpen) {
            var options = OutboxStore.defaultOptions
            options.readOnly = true
            options.checkAtOpen = true  // damage is reported as such, not as a failed query
            do {
                return try OutboxStore(path: path, options: options)
            } catch let readerError as SQLiteError where readerError.cannotOpen {
                throw error  // a reader cannot either (no -shm beside the file, none creatable): the first reason
            }
        }
    }

    /// The events waiting in the outbox of `sinks` (none configured): counted (`dryRun`) or deleted and synced.
    static func dropOutbox(of sinks: [String], in store: OutboxStore, dryRun: Bool) throws -> Int {
        guard !sinks.isEmpty else { return 0 }
        if dryRun { return try store.outboxCount(sinks: sinks) }
        let dropped = try store.dropOutbox(sinks: sinks)
        try store.syncToDisk()
        return dropped
    }
}
