internal import BridgeStore
package import BridgeSystem
internal import Synchronization
package import BridgeEvents
internal import BridgeDirectus

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// `<state_dir>/cursor.db`: every sink's activity progress (`CursorStore`), a SQLite file of its own (WAL,
/// `synchronous=FULL`, so a recorded batch survives a crash and a power loss).
///
/// Each sink has its own cursor, resolved ranges and subscription states, keyed by its stable id (docs/ARCHITECTURE.md
/// "Independent sinks"). Opening the file for the configured sinks brings it to that set:
/// * a named sink the file does not know takes over the progress of its positional id, when the file has it (a
///   name added to a sink that had none: `CursorDatabase+SinkNames`, `SinkRenames`);
/// * a sink the file does not know starts from the progress of the sink furthest behind (the single cursor of a
///   state directory written before 0.2 counts as one) — a renamed or re-ordered sink repeats events rather than
///   missing any — or, in an empty file, at the newest activity id when its reader starts;
/// * the progress of sinks no longer configured is removed, so that it cannot hold a new sink back.
public final class CursorDatabase: Sendable {
    /// The file name under `state_dir`.
    public static let fileName = "cursor.db"
    /// The sink id under which schema version 3 keeps the single cursor of older versions until it is handed on.
    package static let legacySink = ""

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
        // One cursor per sink (docs/ARCHITECTURE.md "Independent sinks"). The single cursor becomes the legacy sink's
        // (''), handed on to every configured sink at the first open.
        SQLiteMigration(
            version: 3,
            sql: """
                CREATE TABLE sink_cursor (sink TEXT PRIMARY KEY, committed INTEGER NOT NULL);
                CREATE TABLE sink_resolved_range (
                    sink TEXT NOT NULL, low INTEGER NOT NULL, high INTEGER NOT NULL, PRIMARY KEY (sink, low));
                CREATE TABLE sink_subscription_state (
                    sink TEXT NOT NULL, uid TEXT NOT NULL, start_id INTEGER NOT NULL, snapshot_watermark INTEGER,
                    snapshot_done INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (sink, uid));
                INSERT INTO sink_cursor (sink, committed) SELECT '', committed FROM cursor;
                INSERT INTO sink_resolved_range (sink, low, high) SELECT '', low, high FROM resolved_range;
                INSERT INTO sink_subscription_state (sink, uid, start_id, snapshot_watermark, snapshot_done)
                    SELECT '', uid, start_id, snapshot_watermark, snapshot_done FROM subscription_state;
                DROP TABLE cursor;
                DROP TABLE resolved_range;
                DROP TABLE subscription_state;
                """
        ),
        // `directus-bridge resync` (README.md "Resync"): a request each sink's next start acts on.
        SQLiteMigration(
            version: 4,
            sql: "ALTER TABLE sink_subscription_state ADD COLUMN resync_requested INTEGER NOT NULL DEFAULT 0;"
        ),
        // Where a snapshot a clean stop cut resumes (`SubscriptionCursorState.snapshotAfter`): the last key of the
        // last page durable in the sink, as JSON text, and the snapshot's lines so far (docs/RELIABILITY.md,
        // "Careless or hostile operators"). A snapshot pending in an older file has neither: it starts over.
        SQLiteMigration(
            version: 5,
            sql: """
                ALTER TABLE sink_subscription_state ADD COLUMN snapshot_after TEXT;
                ALTER TABLE sink_subscription_state ADD COLUMN snapshot_lines INTEGER NOT NULL DEFAULT 0;
                """
        ),
        // The collection a resume point is a key of (`SubscriptionCursorState.snapshotCollection`): a subscription's
        // `uid` moved to another collection would otherwise resume there, skipping every item up to a key of the old
        // one. A point of an older file has none and is not used: its snapshot starts from its first page (a repeat,
        // never a skip; docs/RELIABILITY.md, "Files another user controls").
        SQLiteMigration(
            version: 6,
            sql: "ALTER TABLE sink_subscription_state ADD COLUMN snapshot_collection TEXT;"
        ),
        // The collection a subscription's state is of (`SubscriptionCursorState.collection`): a `uid` moved to
        // another collection kept the old one's state, so a snapshot done there meant none of the new one's items
        // (docs/RELIABILITY.md, "A subscription moved to another collection"). A state of an older file has none; the
        // next start records it. And the query its snapshot was taken with (`snapshotQuery`), unknown in an older file.
        SQLiteMigration(
            version: 7,
            sql: """
                ALTER TABLE sink_subscription_state ADD COLUMN collection TEXT;
                ALTER TABLE sink_subscription_state ADD COLUMN snapshot_query TEXT;
                """
        ),
    ]

    let database: Mutex<SQLiteDatabase>
    /// The database file.
    public let path: String
    /// Says when the file was deleted while open and copied anew (`renewIfGone`).
    let logger: Logger

    /// What `load` reads for one sink.
    package struct Loaded {
        package var cursor: ActivityCursor?
        package var subscriptions: [String: SubscriptionCursorState]
    }

    /// Opens (creating it and the directory when missing) `<directory>/cursor.db` for the configured `sinks`;
    /// `renames` says where named sinks kept their progress before they had a name (`SinkCatalog.renames`).
    package convenience init(
        directory: String, sinks: [String], renames: SinkRenames = SinkRenames(), logger: Logger = .silent
    ) throws {
        try StateDirectory.prepare(directory)
        try self.init(
            path: StateDirectory.join(directory, Self.fileName), sinks: sinks, renames: renames, logger: logger)
    }

    /// Opens (creating when missing) the file at `path`, migrates it, and brings it to the configured `sinks`.
    package init(path: String, sinks: [String], renames: SinkRenames = SinkRenames(), logger: Logger = .silent) throws {
        let database = try SQLiteDatabase(path: path, options: .init(synchronous: .full))
        try database.migrate(Self.migrations)
        try Self.rename(renames, in: database, logger: logger)
        try Self.adopt(sinks, in: database, logger: logger)
        self.path = path
        self.logger = logger
        self.database = Mutex(database)
    }

    /// Closes the file now (`SQLiteDatabase.close()`): the end of a run checkpoints and removes `cursor.db-wal`
    /// whoever still holds this object; a later read or write throws. A file deleted since the last write is copied
    /// to its path first (`renewIfGone`): a bridge stopped soon after an `rm` keeps its progress.
    package func close() throws {
        try database.withLock { database in
            defer { try? database.close() }
            try Self.renewIfGone(&database, logger: logger)
            try database.close()
        }
    }

    /// The store of one configured sink.
    public func store(for sink: String) throws -> CursorStore {
        try CursorStore(backend: self, sink: sink)
    }

    /// Every sink's durable cursor in `<directory>/cursor.db`, read without changing the file (for `check` and
    /// `status`, while `run` may be using it); empty when there is no such file or no cursor in it. A state
    /// directory written before 0.2 gives its single cursor under the id "".
    public static func readCursors(directory: String) throws -> [String: ActivityCursor] {
        let path = StateDirectory.join(directory, fileName)
        guard access(path, F_OK) == 0 else { return [:] }
        let database = try SQLiteDatabase(path: path, options: .init(readOnly: true))
        let version = try database.userVersion()
        if version >= 3 {
            var cursors: [String: ActivityCursor] = [:]
            let sinks = try database.query("SELECT sink FROM sink_cursor") { $0.string(at: 0) }
            for sink in sinks { cursors[sink] = try loadCursor(sink: sink, from: database).cursor }
            return cursors
        }
        guard version >= 1,
            let committed = try database.query(
                "SELECT committed FROM cursor WHERE singleton = 1", row: { $0.int64(at: 0) }
            ).first
        else { return [:] }
        let sql =
            version >= 2 ? "SELECT low, high FROM resolved_range ORDER BY low" : "SELECT id, id FROM resolved ORDER BY id"
        let rows = try database.query(sql) { ($0.int64(at: 0), $0.int64(at: 1)) }
        return [legacySink: ActivityCursor(committed: committed, resolvedAbove: validRanges(rows))]
    }

    // MARK: - Loading

    /// Loads `sink`'s cursor and subscription states, storing its ranges in normal form when they were not.
    package func load(sink: String) throws -> Loaded {
        try database.withLock { database in
            let (cursor, stored) = try Self.loadCursor(sink: sink, from: database)
            if let cursor, cursor.resolvedAbove != stored {
                // Merged or cut at the committed mark (one-id rows of the first schema): store the normal form.
                try database.transaction {
                    try database.run("DELETE FROM sink_resolved_range WHERE sink = ?", [.text(sink)])
                    try Self.insert(cursor.resolvedAbove, sink: sink, into: database)
                }
            }
            let rows = try database.query(
                "SELECT uid, start_id, snapshot_watermark, snapshot_done, resync_requested, snapshot_after, "
                    + "snapshot_lines, snapshot_collection, collection, snapshot_query FROM sink_subscription_state "
                    + "WHERE sink = ?",
                [.text(sink)]
            ) { row in
                (
                    row.string(at: 0),
                    SubscriptionCursorState(
                        startID: row.int64(at: 1), snapshotWatermark: row.optionalInt64(at: 2),
                        snapshotDone: row.int64(at: 3) != 0, resyncRequested: row.int64(at: 4) != 0,
                        snapshotAfter: row.optionalString(at: 5), snapshotLines: row.int64(at: 6),
                        snapshotCollection: row.optionalString(at: 7), collection: row.optionalString(at: 8),
                        snapshotQuery: row.optionalString(at: 9))
                )
            }
            return Loaded(cursor: cursor, subscriptions: Dictionary(rows, uniquingKeysWith: { first, _ in first }))
        }
    }

    private static func loadCursor(sink: String, from database: SQLiteDatabase) throws
        -> (cursor: ActivityCursor?, stored: [ClosedRange<Int64>])
    {
        guard
            let committed = try database.query(
                "SELECT committed FROM sink_cursor WHERE sink = ?", [.text(sink)], row: { $0.int64(at: 0) }
            ).first
        else { return (nil, []) }
        let rows = try database.query(
            "SELECT low, high FROM sink_resolved_range WHERE sink = ? ORDER BY low", [.text(sink)]
        ) { ($0.int64(at: 0), $0.int64(at: 1)) }
        let stored = validRanges(rows)
        return (ActivityCursor(committed: committed, resolvedAbove: stored), stored)
    }

    /// A row whose high is below its low is damage, not a range: it is dropped rather than trapped on.
    private static func validRanges(_ rows: [(Int64, Int64)]) -> [ClosedRange<Int64>] {
        rows.compactMap { $0.0 <= $0.1 ? $0.0...$0.1 : nil }
    }

    // MARK: - Configured sinks

    /// Gives every configured sink the file does not know the progress of the sink furthest behind, then removes
    /// the progress of sinks no longer configured (the legacy single cursor included), in one transaction.
    private static func adopt(_ sinks: [String], in database: SQLiteDatabase, logger: Logger) throws {
        let known = try database.query("SELECT sink, committed FROM sink_cursor") { ($0.string(at: 0), $0.int64(at: 1)) }
        let configured = Set(sinks)
        let missing = sinks.filter { sink in !known.contains { $0.0 == sink } }
        let removed = known.map(\.0).filter { !configured.contains($0) }
        guard !missing.isEmpty || !removed.isEmpty else { return }
        let origin = known.min { $0.1 < $1.1 }
        try database.transaction {
            if let origin {
                for sink in missing {
                    try database.run(
                        "INSERT INTO sink_cursor (sink, committed) SELECT ?, committed FROM sink_cursor WHERE sink = ?",
                        [.text(sink), .text(origin.0)])
                    try database.run(
                        "INSERT INTO sink_resolved_range (sink, low, high) "
                            + "SELECT ?, low, high FROM sink_resolved_range WHERE sink = ?",
                        [.text(sink), .text(origin.0)])
                    // OR IGNORE: a sink that never started may already hold a `resync` request of its own. Without
                    // the resume point: none of a pending snapshot's pages is in this sink (`adopted`).
                    try database.run(
                        "INSERT OR IGNORE INTO sink_subscription_state "
                            + "(sink, uid, start_id, snapshot_watermark, snapshot_done, resync_requested, "
                            + "snapshot_after, snapshot_lines, snapshot_collection, collection, snapshot_query) "
                            + "SELECT ?, uid, start_id, snapshot_watermark, snapshot_done, resync_requested, NULL, 0, "
                            + "NULL, collection, snapshot_query "
                            + "FROM sink_subscription_state WHERE sink = ?",
                        [.text(sink), .text(origin.0)])
                }
            }
            for sink in removed {
                for table in ["sink_cursor", "sink_resolved_range", "sink_subscription_state"] {
                    try database.run("DELETE FROM \(table) WHERE sink = ?", [.text(sink)])
                }
            }
        }
        if let origin {
            for sink in missing {
                let from = origin.0 == legacySink ? "the state directory's single cursor" : "sink \(origin.0)"
                logger.info(
                    "sink starts from the progress of \(from), the furthest behind",
                    metadata: [LogKey.sink: sink, LogKey.cursor: origin.1])
            }
        }
        for sink in removed where sink != legacySink {
            logger.info("progress of a sink no longer configured removed", metadata: [LogKey.sink: sink])
        }
    }

    // MARK: - Writing (called by `CursorStore` under its own lock)

    package func writeCursor(sink: String, committed: Int64) throws {
        try writing { database in try Self.upsertCursor(sink: sink, committed: committed, in: database) }
    }

    package func write(_ subscription: SubscriptionCursorState, uid: String, sink: String, clearingResync: Bool) throws {
        try writing { database in
            try Self.write(subscription, uid: uid, sink: sink, clearingResync: clearingResync, to: database)
        }
    }

    /// Runs a write under the lock, then makes sure it is in the file at `path` (`renewIfGone`).
    private func writing(_ body: (SQLiteDatabase) throws -> Void) throws {
        try database.withLock { database in
            try body(database)
            try Self.renewIfGone(&database, logger: logger)
        }
    }

    /// Writes one batch's progress of `sink` in one transaction: the cursor when it moved (only the ranges that
    /// changed since `previous`: a batch touches one or two), and finished snapshots.
    package func record(
        sink: String, cursor: ActivityCursor?, previous: ActivityCursor,
        subscriptions: [(uid: String, state: SubscriptionCursorState)]
    ) throws {
        try writing { database in
            try database.transaction {
                if let cursor {
                    try Self.upsertCursor(sink: sink, committed: cursor.committed, in: database)
                    let kept = Set(cursor.resolvedAbove)
                    let before = Set(previous.resolvedAbove)
                    for range in previous.resolvedAbove where !kept.contains(range) {
                        try database.run(
                            "DELETE FROM sink_resolved_range WHERE sink = ? AND low = ?",
                            [.text(sink), .integer(range.lowerBound)])
                    }
                    try Self.insert(cursor.resolvedAbove.filter { !before.contains($0) }, sink: sink, into: database)
                }
                for (uid, state) in subscriptions {
                    try Self.write(state, uid: uid, sink: sink, to: database)
                }
            }
        }
    }

    private static func upsertCursor(sink: String, committed: Int64, in database: SQLiteDatabase) throws {
        try database.run(
            "INSERT INTO sink_cursor (sink, committed) VALUES (?, ?) "
                + "ON CONFLICT (sink) DO UPDATE SET committed = excluded.committed",
            [.text(sink), .integer(committed)])
    }

    private static func insert(_ ranges: [ClosedRange<Int64>], sink: String, into database: SQLiteDatabase) throws {
        for range in ranges {
            try database.run(
                "INSERT OR REPLACE INTO sink_resolved_range (sink, low, high) VALUES (?, ?, ?)",
                [.text(sink), .integer(range.lowerBound), .integer(range.upperBound)])
        }
    }

    /// Upserts a subscription's state. A resync request in the file is kept unless `clearingResync` (only the start
    /// that acts on it clears it): `directus-bridge resync` writes it beside a running bridge, whose own writes (a
    /// snapshot finishing) must not undo it.
    private static func write(
        _ subscription: SubscriptionCursorState, uid: String, sink: String, clearingResync: Bool = false,
        to database: SQLiteDatabase
    ) throws {
        try database.run(
            """
            INSERT INTO sink_subscription_state (sink, uid, start_id, snapshot_watermark, snapshot_done, resync_requested,
                snapshot_after, snapshot_lines, snapshot_collection, collection, snapshot_query)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (sink, uid) DO UPDATE SET start_id = excluded.start_id,
                snapshot_watermark = excluded.snapshot_watermark, snapshot_done = excluded.snapshot_done,
                resync_requested = CASE WHEN ? THEN excluded.resync_requested ELSE resync_requested END,
                snapshot_after = excluded.snapshot_after, snapshot_lines = excluded.snapshot_lines,
                snapshot_collection = excluded.snapshot_collection,
                collection = excluded.collection, snapshot_query = excluded.snapshot_query
            """,
            [
                .text(sink), .text(uid), .integer(subscription.startID),
                subscription.snapshotWatermark.map(SQLiteValue.integer) ?? .null,
                .integer(subscription.snapshotDone ? 1 : 0), .integer(subscription.resyncRequested ? 1 : 0),
                subscription.snapshotAfter.map(SQLiteValue.text) ?? .null, .integer(subscription.snapshotLines),
                subscription.snapshotCollection.map(SQLiteValue.text) ?? .null,
                subscription.collection.map(SQLiteValue.text) ?? .null,
                subscription.snapshotQuery.map(SQLiteValue.text) ?? .null, .integer(clearingResync ? 1 : 0),
            ])
    }
}
