package import BridgeSystem
internal import BridgeStore
internal import Synchronization
package import BridgeEvents

/// The outbox and dead letters of a run (`<state_dir>/webhooks.db`), a sink-neutral component any connector gets
/// through its context (`SinkContext.outbox(purpose:)`): the webhook sink keeps its outbox there, every sink that
/// can refuse an event for good (broker sinks) its dead letters. Opened by the first sink that asks
/// (`SinkResources`), with what is known about the sinks that use it.
package final class OutboxFile: Sendable {
    /// The store.
    package let store: OutboxStore
    private let logger: Logger
    private let configured = Mutex<Set<String>>([])
    private let checkedLeftovers = Atomic<Bool>(false)

    /// Opens the outbox under `stateDir`.
    package init(stateDir: String, logger: Logger) throws {
        store = try OutboxStore.open(stateDir: stateDir, logger: logger)
        self.logger = logger
    }

    /// The outbox of `context`'s state directory — opened by the first sink of the run that needs it, shared by the
    /// others — with `context`'s sink registered. `purpose` names what the sink keeps there, for the error.
    fileprivate static func registered(for context: SinkContext, purpose: String) throws(RuntimeOutcome) -> OutboxFile {
        let outbox: OutboxFile
        do {
            outbox = try context.shared.value(OutboxFile.self) {
                let outbox = try OutboxFile(stateDir: context.stateDir, logger: context.logger)
                // Before any sink reads its rows: a sink that was just named finds them under its name.
                for (name, former) in try outbox.store.keepRows(of: context.renames) {
                    context.logger.info(
                        "outbox and dead letters kept under the sink's new name",
                        metadata: [LogKey.sink: name, LogKey.formerSink: former])
                }
                return outbox
            }
        } catch {
            // A read-only or damaged webhooks.db stops the start here (exit 78), as an unwritable state_dir does.
            let reason = (error as? SQLiteError)?.reason ?? "\(error)"
            throw .configurationProblem("cannot open the \(purpose) in \(context.stateDir): \(reason)")
        }
        outbox.register(context.sinkID)
        return outbox
    }

    /// Closes `webhooks.db` at the end of the run that opened it, once its sinks stopped (`RuntimeComponents`).
    package func close() {
        do {
            try store.close()
        } catch {
            logger.error("webhooks.db was not closed cleanly", metadata: [LogKey.error: "\(error)"])
        }
    }

    /// Notes that sink `sinkID` is configured in this run.
    package func register(_ sinkID: String) {
        configured.withLock { _ = $0.insert(sinkID) }
    }

    /// Once per run (the first webhook or broker sink to start calls it, after every sink registered): rows of a sink
    /// that is no longer in bridge.yaml (its target or position changed) are kept, not delivered — say so.
    package func warnAboutLeftovers() {
        guard !checkedLeftovers.exchange(true, ordering: .relaxed), let counts = try? store.outboxCountsBySink()
        else { return }
        let configured = configured.withLock { $0 }
        for (sink, count) in counts where !configured.contains(sink) && count > 0 {
            logger.warning(
                "the outbox holds events of a sink that is no longer configured; they are kept, not sent, until the "
                    + "sink is configured again or `directus-bridge dlq purge --sink \(sink)` drops them",
                metadata: [LogKey.sink: sink, LogKey.count: count]
            )
        }
    }
}

extension SinkContext {
    /// The run's outbox and dead letters (`OutboxFile`), with this sink registered as one that uses them; a file that
    /// cannot be opened is a configuration problem (exit 78). `purpose` names what the sink keeps there.
    package func outbox(purpose: String) throws(RuntimeOutcome) -> OutboxFile {
        try OutboxFile.registered(for: self, purpose: purpose)
    }
}
