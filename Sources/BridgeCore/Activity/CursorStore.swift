import BridgeStore
import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// What the cursor store keeps per subscription uid.
public struct SubscriptionCursorState: Sendable, Equatable {
    /// Activity rows at or below this id are not emitted for the subscription (it did not exist then, or its
    /// snapshot already covers them).
    public var startID: Int64
    /// The activity id read before the subscription's snapshot began, when it has one.
    public var snapshotWatermark: Int64?
    /// Whether that snapshot was accepted by every sink.
    public var snapshotDone: Bool

    /// Creates a state.
    public init(startID: Int64, snapshotWatermark: Int64? = nil, snapshotDone: Bool = false) {
        self.startID = startID
        self.snapshotWatermark = snapshotWatermark
        self.snapshotDone = snapshotDone
    }

    /// A snapshot was started (the watermark is saved) but not finished: it must run again with the same watermark.
    public var snapshotPending: Bool { snapshotWatermark != nil && !snapshotDone }
}

/// The durable activity cursor: `<state_dir>/cursor.db`, a SQLite file of its own (WAL, `synchronous=FULL`, so a
/// recorded batch survives a crash and a power loss).
///
/// The dispatcher records each batch's progress here once every sink accepted it (`ProgressRecorder`); the
/// activity reader reads the cursor and the per-subscription states at start-up and saves new subscriptions and
/// snapshot watermarks. Every call runs under one lock and may fsync: call it off Swift's cooperative pool.
public final class CursorStore: ProgressRecorder, Sendable {
    /// The file name under `state_dir`.
    public static let fileName = "cursor.db"

    private struct State {
        let database: SQLiteDatabase
        var cursor: ActivityCursor?
        var subscriptions: [String: SubscriptionCursorState]
    }

    private static let migrations = [
        SQLiteMigration(
            version: 1,
            sql: """
                CREATE TABLE cursor (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), committed INTEGER NOT NULL);
                CREATE TABLE resolved (id INTEGER PRIMARY KEY);
                CREATE TABLE subscription_state (
                    uid TEXT PRIMARY KEY, start_id INTEGER NOT NULL, snapshot_watermark INTEGER,
                    snapshot_done INTEGER NOT NULL DEFAULT 0);
                """
        ),
        // Resolved ids above the committed mark as ranges (docs/ARCHITECTURE.md "Activity ids as ranges"): a jump of
        // the id sequence must not cost a row per id. Old single ids become one-id ranges, merged at the next load.
        SQLiteMigration(
            version: 2,
            sql: """
                CREATE TABLE resolved_range (low INTEGER PRIMARY KEY, high INTEGER NOT NULL);
                INSERT INTO resolved_range (low, high) SELECT id, id FROM resolved;
                DROP TABLE resolved;
                """
        ),
    ]

    private let state: Mutex<State>
    /// The database file.
    public let path: String

    /// Opens (creating it and the directory when missing) `<directory>/cursor.db`.
    public convenience init(directory: String) throws {
        try StateDirectory.create(directory)
        try self.init(path: StateDirectory.join(directory, Self.fileName))
    }

    /// Opens (creating when missing) the store at `path` and loads it.
    public init(path: String) throws {
        let database = try SQLiteDatabase(path: path, options: .init(synchronous: .full))
        try database.migrate(Self.migrations)
        let (cursor, stored) = try Self.loadCursor(database)
        if let cursor, cursor.resolvedAbove != stored {
            // Merged or cut at the committed mark (one-id rows of the first schema): store the normal form.
            try database.transaction {
                try database.run("DELETE FROM resolved_range")
                try Self.insert(cursor.resolvedAbove, into: database)
            }
        }
        var subscriptions: [String: SubscriptionCursorState] = [:]
        let rows = try database.query(
            "SELECT uid, start_id, snapshot_watermark, snapshot_done FROM subscription_state"
        ) { row in
            (
                row.string(at: 0),
                SubscriptionCursorState(
                    startID: row.int64(at: 1),
                    snapshotWatermark: row.optionalInt64(at: 2),
                    snapshotDone: row.int64(at: 3) != 0
                )
            )
        }
        for (uid, saved) in rows { subscriptions[uid] = saved }
        self.path = path
        state = Mutex(State(database: database, cursor: cursor, subscriptions: subscriptions))
    }

    /// The durable cursor in `<directory>/cursor.db`, read without changing the file (for `check`, while `run` may
    /// be using it); nil when there is no such file or no cursor in it.
    public static func readCursor(directory: String) throws -> ActivityCursor? {
        let path = StateDirectory.join(directory, fileName)
        guard access(path, F_OK) == 0 else { return nil }
        return try loadCursor(SQLiteDatabase(path: path, options: .init(readOnly: true))).cursor
    }

    /// The cursor in `database` (either schema version) and its resolved ranges as stored.
    private static func loadCursor(_ database: SQLiteDatabase) throws
        -> (cursor: ActivityCursor?, stored: [ClosedRange<Int64>])
    {
        let committedSQL = "SELECT committed FROM cursor WHERE singleton = 1"
        guard try database.userVersion() >= 1,
            let committed = try database.query(committedSQL, row: { $0.int64(at: 0) }).first
        else { return (nil, []) }
        let sql =
            try database.userVersion() >= 2
            ? "SELECT low, high FROM resolved_range ORDER BY low" : "SELECT id, id FROM resolved ORDER BY id"
        let rows = try database.query(sql) { ($0.int64(at: 0), $0.int64(at: 1)) }
        // A row whose high is below its low is damage, not a range: it is dropped rather than trapped on.
        let stored = rows.compactMap { $0.0 <= $0.1 ? $0.0...$0.1 : nil }
        return (ActivityCursor(committed: committed, resolvedAbove: stored), stored)
    }

    /// The durable cursor, or nil when the bridge never started in activity mode with this state directory.
    public var cursor: ActivityCursor? { state.withLock { $0.cursor } }

    /// Every saved subscription state by uid.
    public var subscriptions: [String: SubscriptionCursorState] { state.withLock { $0.subscriptions } }

    /// Creates the cursor at `head` (first start: no history replay) unless one exists; returns the cursor in force.
    @discardableResult
    public func startIfNew(at head: Int64) throws -> ActivityCursor {
        try state.withLock { state in
            if let cursor = state.cursor { return cursor }
            try state.database.run(
                "INSERT INTO cursor (singleton, committed) VALUES (1, ?)",
                [.integer(head)]
            )
            let cursor = ActivityCursor(committed: head)
            state.cursor = cursor
            return cursor
        }
    }

    /// Saves (replaces) the state of subscription `uid`.
    public func save(_ subscription: SubscriptionCursorState, for uid: String) throws {
        try state.withLock { state in
            try Self.write(subscription, uid: uid, to: state.database)
            state.subscriptions[uid] = subscription
        }
    }

    /// Makes a batch's progress durable in one transaction: resolved and abandoned ids, finished snapshots.
    public func record(_ progress: ActivityProgress) throws {
        guard !progress.isEmpty else { return }
        try state.withLock { state in
            var cursor = state.cursor ?? ActivityCursor(committed: 0)
            let before = cursor
            cursor.apply(progress)
            var subscriptions = state.subscriptions
            for (uid, watermark) in progress.completedSnapshots {
                var saved = subscriptions[uid] ?? SubscriptionCursorState(startID: watermark)
                saved.snapshotWatermark = watermark
                saved.snapshotDone = true
                subscriptions[uid] = saved
            }
            let database = state.database
            try database.transaction {
                if cursor != before || state.cursor == nil {
                    try database.run(
                        "INSERT INTO cursor (singleton, committed) VALUES (1, ?) "
                            + "ON CONFLICT (singleton) DO UPDATE SET committed = excluded.committed",
                        [.integer(cursor.committed)]
                    )
                    // Only the ranges that changed are written: a batch touches one or two of them.
                    let kept = Set(cursor.resolvedAbove)
                    let previous = Set(before.resolvedAbove)
                    let added = cursor.resolvedAbove.filter { !previous.contains($0) }
                    for range in before.resolvedAbove where !kept.contains(range) {
                        try database.run("DELETE FROM resolved_range WHERE low = ?", [.integer(range.lowerBound)])
                    }
                    try Self.insert(added, into: database)
                }
                for uid in progress.completedSnapshots.keys {
                    if let saved = subscriptions[uid] { try Self.write(saved, uid: uid, to: database) }
                }
            }
            state.cursor = cursor
            state.subscriptions = subscriptions
        }
    }

    private static func insert(_ ranges: [ClosedRange<Int64>], into database: SQLiteDatabase) throws {
        for range in ranges {
            try database.run(
                "INSERT OR REPLACE INTO resolved_range (low, high) VALUES (?, ?)",
                [.integer(range.lowerBound), .integer(range.upperBound)]
            )
        }
    }

    private static func write(_ subscription: SubscriptionCursorState, uid: String, to database: SQLiteDatabase)
        throws
    {
        try database.run(
            """
            INSERT INTO subscription_state (uid, start_id, snapshot_watermark, snapshot_done) VALUES (?, ?, ?, ?)
            ON CONFLICT (uid) DO UPDATE SET start_id = excluded.start_id,
                snapshot_watermark = excluded.snapshot_watermark, snapshot_done = excluded.snapshot_done
            """,
            [
                .text(uid), .integer(subscription.startID),
                subscription.snapshotWatermark.map(SQLiteValue.integer) ?? .null,
                .integer(subscription.snapshotDone ? 1 : 0),
            ]
        )
    }
}
