package import BridgeActivity
import BridgeSinks
import BridgeStore

/// What `directus-bridge status` reads from `delivery.state_dir`: the durable state, as one value.
package struct StoredState: Sendable, Equatable {
    /// Per sink id: the activity cursor of that sink (every id up to `committed` is in the sink). A state directory
    /// written before 0.2 has one cursor for every sink, under the id "".
    package var sinkCursors: [String: ActivityCursor]
    /// Per sink id, per subscription uid: where it starts, its snapshot, a pending resync.
    package var subscriptions: [String: [String: SubscriptionCursorState]]
    /// Per webhook sink id: events waiting in its outbox.
    package var outboxDepths: [String: Int]
    /// Per sink id: dead letters (a webhook's, or events a broker refused for good).
    package var deadLetters: [String: Int]
    /// Who holds the role of the active bridge: the bucket, the bridge name and the lease holder (nil: the state
    /// has no lease, its one bridge is always active).
    package var role: String?
    /// Where it was read, as messages name it (nil: `delivery.state_dir`, named by its path).
    package var location: String?

    /// A state (empty: nothing stored yet).
    package init(
        sinkCursors: [String: ActivityCursor] = [:], subscriptions: [String: [String: SubscriptionCursorState]] = [:],
        outboxDepths: [String: Int] = [:], deadLetters: [String: Int] = [:]
    ) {
        self.sinkCursors = sinkCursors
        self.subscriptions = subscriptions
        self.outboxDepths = outboxDepths
        self.deadLetters = deadLetters
    }

    /// The cursor of sink `id`: its own, or the single cursor of a state directory written before 0.2 (which every
    /// sink takes over at its next start).
    package func cursor(ofSink id: String) -> (cursor: ActivityCursor, legacy: Bool)? {
        if let own = sinkCursors[id] { return (own, false) }
        return sinkCursors[CursorDatabase.legacySink].map { ($0, true) }
    }

    /// The state of subscription `uid` for sink `id` (or the legacy single state).
    package func subscription(_ uid: String, sink id: String) -> SubscriptionCursorState? {
        subscriptions[id]?[uid] ?? subscriptions[CursorDatabase.legacySink]?[uid]
    }
}

/// Reads the durable state for `status`: the one seam between `status` and the state files.
package protocol StateReading: Sendable {
    /// The state now; never creates or changes a file.
    func read() throws -> StoredState
}

/// ``StateReading`` of the SQLite files in `delivery.state_dir` (`cursor.db`, `webhooks.db`), read beside a running
/// bridge (WAL: readers do not block it) and never created or migrated.
package struct LocalStateReader: StateReading {
    /// `delivery.state_dir`.
    package var stateDir: String

    /// A reader of `stateDir`.
    package init(stateDir: String) { self.stateDir = stateDir }

    package func read() throws -> StoredState {
        var state = StoredState(
            sinkCursors: try CursorDatabase.readCursors(directory: stateDir),
            subscriptions: try CursorDatabase.readSubscriptionStates(directory: stateDir))
        if let outboxPath = OutboxStore.existingPath(stateDir: stateDir) {
            // Read-only: `status` only reads, so it works on a file the bridge may not write (and never changes it).
            let database = try SQLiteDatabase(path: outboxPath, options: .init(readOnly: true))
            state.outboxDepths = try Self.countBySink("outbox", in: database)
            state.deadLetters = try Self.countBySink("dead_letters", in: database)
        }
        return state
    }

    private static func countBySink(_ table: String, in database: SQLiteDatabase) throws -> [String: Int] {
        let rows = try database.query("SELECT sink, COUNT(*) FROM \(table) GROUP BY sink") {
            ($0.string(at: 0), $0.int(at: 1))
        }
        return Dictionary(rows, uniquingKeysWith: +)
    }
}
