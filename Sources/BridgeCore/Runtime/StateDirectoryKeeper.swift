package import BridgeEvents
package import BridgeSystem
private import Synchronization

/// Keeps `delivery.state_dir` this bridge's while `run` serves: the files it holds open by their names must stay the
/// files at those names, or an operator's `rm state/*` (a clean-up script, "starting over") leaves the bridge
/// writing into files nobody will open again (docs/RELIABILITY.md, "Careless or hostile operators").
///
/// - `bridge.lock` (`StateDirectoryLock.keep`): deleted or replaced, it is locked again at its path, so a second
///   `run` on the directory is refused again; when another bridge locked the path meanwhile, this one stops — the
///   same graceful stop as on SIGTERM — and exits 78, as it would have at its start (`lostClaim`).
/// - `cursor.db` and `webhooks.db` (`CursorDatabase.keepAtPath`, `OutboxStore.keepAtPath`): they check after their
///   own writes and syncs, but an idle bridge, or a webhook whose receiver is down, writes nothing for as long as
///   it likes, and a restart then starts without what the deleted file held.
///
/// No timer of its own: every sink's runner calls `check` before each attempt and at each tick (at least once a
/// second, `SinkRunner`), and the work is done at most once per `interval` whoever calls.
package final class StateDirectoryKeeper: Sendable {
    /// The least time between two checks.
    package static let interval = Duration.seconds(1)

    private struct State {
        var nextCheck: ContinuousClock.Instant
        /// Why this bridge stopped, once another one took the directory.
        var lost: String?
        /// The files (and the lock) whose last check failed: said once until one succeeds.
        var failing: Set<String> = []
    }

    private let lock: StateDirectoryLock
    private let stop: ShutdownSignal
    private let logger: Logger
    private let state: Mutex<State>

    /// Watches `lock`'s directory; `stop` is the run's, triggered when another bridge took the directory.
    package init(lock: StateDirectoryLock, stop: ShutdownSignal, logger: Logger) {
        self.lock = lock
        self.stop = stop
        self.logger = logger
        state = Mutex(State(nextCheck: .now + Self.interval))
    }

    /// The run's outcome once another bridge took the directory (exit 78); nil while it is this bridge's.
    package var lostClaim: RuntimeOutcome? {
        state.withLock { $0.lost }.map(RuntimeOutcome.configurationProblem)
    }

    /// Checks the lock, then `files` (each a name and the call that keeps it at its path), unless the last check was
    /// less than `interval` ago. Blocking (a few `stat`s; a copy when a file was deleted): call it on a thread of
    /// its own, as the sinks' runners are. `files` is built only when a check is due: the runners call this before
    /// every attempt, once per batch.
    package func check(
        files: @autoclosure () -> [(name: String, keep: () throws -> Void)], now: ContinuousClock.Instant = .now
    ) {
        let due = state.withLock { state -> Bool in
            guard state.lost == nil, now >= state.nextCheck else { return false }
            state.nextCheck = now + Self.interval
            return true
        }
        guard due, keepLock() else { return }
        for file in files() {
            do {
                try file.keep()
                passed(file.name)
            } catch {
                failed(
                    file.name,
                    "\(file.name) cannot be kept at its path in delivery.state_dir; trying again every second",
                    error: "\(error)")
            }
        }
    }

    /// False once the directory is another bridge's.
    private func keepLock() -> Bool {
        do throws(StateDirectoryLock.Failure) {
            if try lock.keep() == .lockedAgain {
                logger.warning(
                    "bridge.lock was deleted or replaced while the bridge ran; a new one at its path is locked, so a "
                        + "second bridge on this state_dir is refused again",
                    metadata: [LogKey.path: lock.path])
            }
            passed(StateDirectoryLock.fileName)
            return true
        } catch .system(let error) {
            // The directory cannot be made again or used (a file in its place, a parent gone read-only): no other
            // bridge can lock the path either. Said once, tried again at each check.
            failed(
                StateDirectoryLock.fileName,
                "bridge.lock was deleted or replaced while the bridge ran, and it cannot be locked again at its path: "
                    + "a second bridge could start on this state_dir; trying again every second",
                error: "\(error)")
            return true
        } catch {
            let reason =
                if case .held(let directory, let pid) = error {
                    "delivery.state_dir \(directory) is in use by "
                        + (pid.map { "another directus-bridge (pid \($0))" } ?? "another directus-bridge")
                        + ", which locked a new bridge.lock after this bridge's was deleted or replaced: this bridge "
                        + "stops rather than deliver beside it; give each bridge its own state_dir, or run replicas "
                        + "with state.backend: jetstream"
                } else {
                    "\(error.description); this bridge stops"
                }
            state.withLock { $0.lost = reason }
            logger.error(reason)
            stop.trigger()
            return false
        }
    }

    private func passed(_ name: String) {
        state.withLock { _ = $0.failing.remove(name) }
    }

    private func failed(_ name: String, _ message: String, error: String) {
        guard state.withLock({ $0.failing.insert(name).inserted }) else { return }
        logger.warning(message, metadata: [LogKey.error: error])
    }
}
