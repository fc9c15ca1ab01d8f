package import BridgeActivity
package import BridgeConfig
package import BridgeEvents
internal import BridgeSinks
package import BridgeSystem
internal import BridgeStore

/// One term of the bridge as its state backend shapes it (`StateBackend.run` hands it to `BridgeRuntime.runTerm`):
/// whether a delivery mode can be served, where the activity readers' cursors live, and who permits delivering.
/// Local state has one term, from start to stop; shared state a term each time this bridge holds the lease.
package protocol TermState: Sendable {
    /// Asked by every sink's runner before each delivery (nil: always allowed).
    var permit: (any DeliveryPermit)? { get }
    /// Why the term cannot serve delivery mode `mode` (nil: it can).
    func refusal(of mode: DeliveryMode) -> RuntimeOutcome?
    /// Opens the cursors of `sinks` (blocking: call it on the blocking executor).
    func openCursors(sinks: [String], renames: SinkRenames, logger: Logger) throws -> TermCursors
    /// What a failure of `openCursors` with `error` means for the run.
    func failedToOpen(_ error: any Error) -> RuntimeOutcome
}

/// The cursors of one term.
package struct TermCursors: Sendable {
    /// Where each sink's cursor is read and written.
    package var backend: any CursorBackend
    /// Where a `resync` written beside the running bridge is found.
    package var resyncRequests: any ResyncRequestSource
    /// `cursor.db` when the term keeps its cursors there (local state), closed at the term's end.
    package var cursorFile: CursorDatabase?
}

/// `state.backend: local`: `<state_dir>/cursor.db`, one term, no lease.
package struct LocalTermState: TermState {
    /// `delivery.state_dir`.
    package var stateDir: String

    package var permit: (any DeliveryPermit)? { nil }

    package func refusal(of mode: DeliveryMode) -> RuntimeOutcome? { nil }

    package func openCursors(sinks: [String], renames: SinkRenames, logger: Logger) throws -> TermCursors {
        let database = try CursorDatabase(directory: stateDir, sinks: sinks, renames: renames, logger: logger)
        return TermCursors(backend: database, resyncRequests: database, cursorFile: database)
    }

    /// An unwritable `delivery.state_dir`, a read-only or damaged `cursor.db`: a configuration problem (exit 78).
    package func failedToOpen(_ error: any Error) -> RuntimeOutcome {
        let reason = (error as? SQLiteError)?.reason ?? "\(error)"
        return .configurationProblem("cannot open the activity cursor store in delivery.state_dir: \(reason)")
    }
}

/// `state.backend: jetstream`: the bucket's cursors, taken over (every key's revision bumped) before the readers
/// start, delivering while the lease is held.
package struct SharedTermState: TermState {
    /// This term's fenced access to the bucket.
    package var cursors: SharedCursorBackend
    /// The lease.
    package var keeper: LeaseKeeper

    package var permit: (any DeliveryPermit)? { keeper }

    /// Shared cursors follow the activity log: live mode has nothing another bridge could resume from.
    package func refusal(of mode: DeliveryMode) -> RuntimeOutcome? {
        guard mode != .activity else { return nil }
        return .configurationProblem(
            "state.backend: jetstream needs activity mode, but delivery.mode auto resolved to live (the activity "
                + "log is not readable): grant the bridge user read access to directus_activity, or use "
                + "state.backend: local")
    }

    package func openCursors(sinks: [String], renames: SinkRenames, logger: Logger) throws -> TermCursors {
        try cursors.takeOver(sinks: sinks, renames: renames)
        return TermCursors(backend: cursors, resyncRequests: cursors, cursorFile: nil)
    }

    /// The bucket did not answer: this term ends and the bridge waits for the lease again.
    package func failedToOpen(_ error: any Error) -> RuntimeOutcome {
        cursors.giveUp("cannot read the shared state: \(error)")
        return .failure("cannot read the shared state: \(error)")
    }
}
