package import BridgeSystem
private import Synchronization
package import BridgeStore
internal import BridgeEvents

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The webhook outbox and the dead letters: `<state_dir>/webhooks.db` (SQLite, WAL), shared by every webhook sink of
/// the process, by the broker sinks (their dead letters, and the letters `dlq replay` hands back to them) and by
/// `directus-bridge dlq` running beside it.
///
/// One connection, used under a lock from the sinks' runner threads (inserts, a broker's dead letters), each webhook
/// sink's `OutboxWriter` (the outcomes of deliveries), the delivery services' reads (at start, a poll, a replay) and
/// metric scrapes; another process (`dlq`) opens its own connection, and WAL plus the busy timeout let
/// both work at once. Rows carry the sink's id, so several sinks share the tables. An event keeps its id and body
/// from acceptance to delivery or dead letter, across retries, restarts and replays.
///
/// Durability: commits use `synchronous=NORMAL` (WAL): a committed transaction survives a crash of the process at
/// once, and reaches the disk at the latest with `syncToDisk()`, which the webhook sink calls at least once a
/// second and at close — the same promise as the NDJSON sink's default `fsync: interval`. A `FULL` commit per batch
/// would cap intake at one fsync per batch (about 250 batches/s on the development VM).
package final class OutboxStore: @unchecked Sendable {
    // @unchecked: `state` (the SQLite connection, opened SQLITE_OPEN_NOMUTEX, and the depth counts) is only
    // touched inside `withState`, while the monitor's mutex is held; the connection is never handed out of it.
    // `knownDepth` reads the counts outside it: they are behind a lock of their own (`OutboxDepths`).
    /// The file name under `delivery.state_dir`.
    package static let fileName = "webhooks.db"

    package struct State {
        /// Replaced by a connection to a new file when the file was deleted or moved (`keepAtPath`).
        package internal(set) var database: SQLiteDatabase
        /// Rows in the outbox per sink as this process knows them (exact for its own writes; recounted on each
        /// delivery poll to take in rows that `dlq replay` added).
        package let depth: OutboxDepths
    }

    /// A plain pthread mutex (`PthreadMonitor`), not `Synchronization.Mutex`, which was measured as a large share of
    /// the webhook benchmark's CPU while intake and delivery both used the store. Made last in `init`: an init that
    /// throws before every property is set never reaches `deinit`, so anything allocated earlier would leak.
    private let monitor: PthreadMonitor
    private var state: State
    /// `state.depth`, for `knownDepth`, which does not take the lock.
    private let depths: OutboxDepths
    /// The database file.
    package let path: String
    /// Says when the file was deleted while open and copied anew (`keepAtPath`).
    private let logger: Logger

    /// The connection settings the bridge uses (see "Durability" above).
    package static let defaultOptions = SQLiteDatabase.Options(synchronous: .normal)

    /// Opens (creating if needed) the store at `path` and brings its schema up to date. Read-only (`dlq list` of a
    /// file it may not write), the schema must already be current.
    package init(path: String, options: SQLiteDatabase.Options = OutboxStore.defaultOptions, logger: Logger = .silent)
        throws
    {
        let database = try SQLiteDatabase(path: path, options: options)
        if options.readOnly {
            let current = Self.migrations.last?.version ?? 0
            guard try database.userVersion() >= current else {
                throw SQLiteError(
                    resultCode: 8,
                    message: "\(path) was written by an older bridge and cannot be brought up to date: it is "
                        + "read-only for this process; make it writable by the user the bridge runs as")
            }
        } else {
            try database.migrate(Self.migrations)
        }
        self.path = path
        self.logger = logger
        let depths = OutboxDepths()
        self.depths = depths
        self.state = State(database: database, depth: depths)
        monitor = PthreadMonitor(clock: CLOCK_MONOTONIC)
    }

    deinit {
        monitor.destroy()
    }

    /// Opens `<stateDir>/webhooks.db`, creating the directory (and parents, 0700) when missing.
    package static func open(
        stateDir: String, options: SQLiteDatabase.Options = OutboxStore.defaultOptions, logger: Logger = .silent
    ) throws -> OutboxStore {
        try StateDirectory.prepare(stateDir)
        return try OutboxStore(path: stateDir + "/" + fileName, options: options, logger: logger)
    }

    /// The path of the store under `stateDir` when the file exists (the `dlq` commands do not create it).
    package static func existingPath(stateDir: String) -> String? {
        let path = stateDir + "/" + fileName
        return access(path, F_OK) == 0 ? path : nil
    }

    /// Forces every committed transaction to disk: fsync of the write-ahead log, where WAL-mode commits land.
    ///
    /// The fsync runs outside the lock (it syncs the file, whichever descriptor names it), so deliveries and inserts
    /// go on meanwhile; only the check below (a `stat` and an `lstat`) takes it. The log is at its path while the
    /// store is open (SQLite removes it when the last connection closes): one deleted by hand is found by that check,
    /// which writes its commits into the file and starts a new log; one deleted between the check and the `open`
    /// fails the sync, and the retry's check finds it.
    ///
    /// When `webhooks.db` was deleted or renamed while the bridge runs, every commit still succeeds, into a file
    /// that is gone when the process exits: what a sink calls durable here (an outbox row, a broker's dead letter)
    /// would be lost after its cursor moved past it. So the file is first kept at its path (`keepAtPath`), and a
    /// copy that cannot be made throws: the sink retries with its cursor where it was (`/readyz` shows it).
    package func syncToDisk() throws {
        try keepAtPath()
        let walPath = path + "-wal"
        // Never through a link: SQLite's log is a regular file (docs/RELIABILITY.md, "Files another user controls").
        let descriptor = Glibc.open(walPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor < 0 {
            let code = errno
            throw SQLiteError(
                resultCode: 10 /* SQLITE_IOERR */, message: "open \(walPath): \(String(cString: strerror(code)))")
        }
        defer { Glibc.close(descriptor) }
        if fsync(descriptor) != 0 {
            let code = errno
            throw SQLiteError(
                resultCode: 10 /* SQLITE_IOERR */, message: "fsync \(walPath): \(String(cString: strerror(code)))")
        }
    }

    /// Closes the file now (`SQLiteDatabase.close()`): the end of a run checkpoints and removes `webhooks.db-wal`
    /// whoever still holds the store; a later call throws. A file deleted since the last check is copied to its path
    /// first (`keepAtPath`): a bridge stopped soon after an `rm` keeps what waits in it.
    package func close() throws {
        try withState { state in
            defer { try? state.database.close() }
            try renewIfMoved(&state)
            try state.database.close()
        }
    }

    /// When `webhooks.db` was deleted or renamed while open (`rm state/webhooks.db*`, a clean-up script), copies it
    /// whole — the undelivered rows and the dead letters of every sink — into a new file at its path and goes on
    /// with that one (`SQLiteDatabase.renewIfMoved`, shared with `cursor.db`; docs/RELIABILITY.md, "Careless or
    /// hostile operators"). Called before each sync to disk, at close, and by the state directory's periodic check
    /// (`StateDirectoryKeeper`), since a webhook whose receiver is down writes nothing new for as long as it likes.
    /// One `stat` when the file is where it was; throws when a copy cannot be made.
    package func keepAtPath() throws {
        try withState { state in try renewIfMoved(&state) }
    }

    /// A read-only store (`dlq list`) never writes a copy.
    private func renewIfMoved(_ state: inout State) throws {
        guard !state.database.options.readOnly, let renewal = try SQLiteDatabase.renewIfMoved(&state.database)
        else { return }
        logger.warning(
            "\(renewal.warning("webhooks.db", "the outbox and the dead letters were"))",
            metadata: [LogKey.path: path])
    }

    /// Runs `body` with the connection under the lock. `body` must not call back into the store.
    package func withState<T>(_ body: (inout State) throws -> T) throws -> T {
        pthread_mutex_lock(monitor.mutex)
        defer { pthread_mutex_unlock(monitor.mutex) }
        return try body(&state)
    }

    /// The schema. Versions only ever get added (files written by an older bridge are migrated in place).
    package static let migrations: [SQLiteMigration] = [
        SQLiteMigration(
            version: 1,
            sql: """
                CREATE TABLE outbox (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    sink TEXT NOT NULL,
                    event_id TEXT NOT NULL,
                    collection TEXT NOT NULL,
                    item_key TEXT NOT NULL,
                    body BLOB NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at INTEGER NOT NULL,
                    created_at INTEGER NOT NULL,
                    last_status INTEGER,
                    last_error TEXT
                );
                CREATE UNIQUE INDEX outbox_sink_event ON outbox(sink, event_id);
                CREATE TABLE dead_letters (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    sink TEXT NOT NULL,
                    event_id TEXT NOT NULL,
                    collection TEXT NOT NULL,
                    item_key TEXT NOT NULL,
                    body BLOB NOT NULL,
                    attempts INTEGER NOT NULL,
                    created_at INTEGER NOT NULL,
                    dead_at INTEGER NOT NULL,
                    reason TEXT NOT NULL,
                    last_status INTEGER,
                    response BLOB NOT NULL
                );
                CREATE INDEX dead_letters_dead_at ON dead_letters(dead_at);
                """
        ),
        // The change (create, update, ...) of a broker sink's event: its topic or subject and its headers are made
        // from it when a replayed dead letter is sent again. NULL for a webhook's rows, which never need it.
        SQLiteMigration(
            version: 2,
            sql: """
                ALTER TABLE outbox ADD COLUMN event TEXT;
                ALTER TABLE dead_letters ADD COLUMN event TEXT;
                """
        ),
        // A broker sink replaces a letter by its sink and event id, and the delivery services count letters per
        // sink: thousands of letters (an oversized import a broker refuses) must not be scanned per letter.
        SQLiteMigration(
            version: 3,
            sql: "CREATE INDEX dead_letters_sink_event ON dead_letters(sink, event_id);"
        ),
    ]
}

/// The outbox's row counts per sink (`OutboxStore.State.depth`). Changed only under the store's lock, together with
/// the SQLite work that changes the rows; read without it by `OutboxStore.knownDepth`, so a delivery turn that
/// touches no row (its payloads came from memory) can show the depth without waiting for an intake transaction.
package final class OutboxDepths: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// The count of `sink`, nil when it must be counted in the database.
    package subscript(sink: String) -> Int? {
        get { counts.withLock { $0[sink] } }
        set { counts.withLock { $0[sink] = newValue } }
    }
}

// MARK: - Counts

extension OutboxStore {
    /// Rows in the outbox of `sink` as this process counts them, without waiting for the store's lock; nil when
    /// they are being counted again (`depth(sink:)` counts them).
    package func knownDepth(sink: String) -> Int? { depths[sink] }

    /// Rows in the outbox of `sink`, counted in the database (includes rows another process added).
    package func outboxCount(sink: String) throws -> Int {
        try withState { state in
            try state.database.query("SELECT COUNT(*) FROM outbox WHERE sink = ?", [.text(sink)]) { $0.int(at: 0) }
                .first ?? 0
        }
    }

    /// Dead letters of `sink` (of every sink when nil), counted in the database.
    package func deadLetterCount(sink: String?) throws -> Int {
        try withState { state in
            if let sink {
                return try state.database.query("SELECT COUNT(*) FROM dead_letters WHERE sink = ?", [.text(sink)]) {
                    $0.int(at: 0)
                }.first ?? 0
            }
            return try state.database.query("SELECT COUNT(*) FROM dead_letters") { $0.int(at: 0) }.first ?? 0
        }
    }

    /// Outbox rows per sink id, for finding rows of sinks that are no longer configured.
    package func outboxCountsBySink() throws -> [String: Int] {
        try withState { state in
            let rows = try state.database.query("SELECT sink, COUNT(*) FROM outbox GROUP BY sink") {
                ($0.string(at: 0), $0.int(at: 1))
            }
            return Dictionary(rows, uniquingKeysWith: +)
        }
    }
}
