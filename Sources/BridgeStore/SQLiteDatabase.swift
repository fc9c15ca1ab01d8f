import BridgeSystem
import CSQLite

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Owner of one SQLite connection (`sqlite3 *`): the bridge's durable state (cursor, outbox, dead letters).
///
/// Confined to one thread or actor (opened with SQLITE_OPEN_NOMUTEX: SQLite does no locking of its own for
/// this connection). Other processes — `directus-bridge dlq` — may open the same file at the same time: WAL
/// lets readers run beside the writer, and the busy timeout makes a writer wait for another one.
///
/// Prepared statements are cached by SQL text (`statement(for:)`), so hot statements are compiled once.
public final class SQLiteDatabase {
    /// How hard commits wait for the disk.
    public enum Synchronous: String, Sendable {
        /// fsync on every commit: a committed transaction survives power loss.
        case full = "FULL"
        /// In WAL mode, fsync only at checkpoints: survives a crash of the process, may lose the last
        /// commits on power loss.
        case normal = "NORMAL"
    }

    /// Connection settings.
    public struct Options: Sendable {
        /// Default: `.full`.
        public var synchronous: Synchronous
        /// How long a statement waits for another connection's lock before failing with SQLITE_BUSY.
        /// Default: 5 s.
        public var busyTimeout: Duration
        /// Open read-only (no WAL switch, no file creation). Default: false.
        public var readOnly: Bool
        /// Prepared statements kept by `statement(for:)`. Default: 64.
        public var statementCacheCapacity: Int
        /// Read every page once at open (`PRAGMA quick_check`) so that a damaged file is refused at start, not at
        /// the first write that touches the damage. Default: true for a writer, false for a reader.
        public var checkAtOpen: Bool

        /// Creates options; every parameter has the documented default.
        public init(
            synchronous: Synchronous = .full,
            busyTimeout: Duration = .seconds(5),
            readOnly: Bool = false,
            statementCacheCapacity: Int = 64,
            checkAtOpen: Bool? = nil
        ) {
            self.synchronous = synchronous
            self.busyTimeout = busyTimeout
            self.readOnly = readOnly
            self.statementCacheCapacity = statementCacheCapacity
            self.checkAtOpen = checkAtOpen ?? !readOnly
        }
    }

    let raw: OpaquePointer
    /// The file path given to `init`.
    public let path: String
    /// The settings the connection was opened with.
    public let options: Options
    private var cache: [String: SQLiteStatement] = [:]
    /// The write-ahead log this connection writes (a writer's, once it exists): another file at its path is not it
    /// (`logWasDeleted`).
    var logIdentity: FileIdentity?

    /// Opens (creating if needed, unless read-only) the database at `path`, switches it to WAL and applies
    /// `options`. The directory must exist. `":memory:"` opens a private in-memory database. A file created here
    /// is 0600 whatever the umask (`PrivateFile`), and SQLite gives its `-wal` and `-shm` files the same mode.
    ///
    /// A file the operator left unusable is refused here, with an error (`isUnusableFile`) whose message names the
    /// file and what to do, instead of failing at some later write: opened for writing, a file the process may only
    /// read (SQLite would silently open it read-only), a directory where the `-wal`/`-shm` files cannot be created
    /// (a reader needs the `-shm` file too); a file that is not a database or is damaged (`checkAtOpen`); and a named
    /// pipe or a device in place of the file or its `-wal`/`-shm`, which is not even opened; and, opened for writing,
    /// a file or directory another local user controls (`takeOwnership(of:)`). The file is never changed or removed
    /// then.
    public init(path: String, options: Options = Options()) throws {
        let isFile = path != ":memory:" && !path.isEmpty
        if isFile { try Self.refuseSpecialFiles(path) }
        if !options.readOnly && isFile { try Self.takeOwnership(of: path) }
        if isFile { try Self.refuseForeignHeader(path) }  // after a writer's checks: a link is named as a link
        // Not beside another process's index whose log was deleted (`SQLiteDatabase+MissingLog`).
        if isFile { try Self.waitForAMissingLog(of: path) }
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        flags |= options.readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)  // a handle is returned even on failure and must be closed
            throw SQLiteError(resultCode: code, message: "cannot open \(path): \(message)")
        }
        self.raw = handle
        self.path = path
        self.options = options
        if !options.readOnly && isFile && sqlite3_db_readonly(handle, "main") == 1 {
            throw UnusableFile.readOnly(path)
        }
        let (seconds, attoseconds) = options.busyTimeout.components
        sqlite3_busy_timeout(handle, Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        do {
            if !options.readOnly {
                let mode = try pragmaText("PRAGMA journal_mode=WAL").lowercased()
                guard mode == "wal" || mode == "memory" else {
                    throw SQLiteError(resultCode: SQLITE_ERROR, message: "journal_mode is \(mode), WAL was refused")
                }
            }
            try execute("PRAGMA synchronous=\(options.synchronous.rawValue); PRAGMA foreign_keys=ON")
            // Reading the schema reads the header and the first page: "not a database" shows here, not later.
            _ = try pragmaText("PRAGMA schema_version")
            if options.checkAtOpen { try checkPages() }
            if !options.readOnly && isFile { logIdentity = FileIdentity(of: path + "-wal") }
        } catch let error as SQLiteError where isFile && error.isCorrupt {
            throw UnusableFile.damaged(path, error)
        } catch let error as SQLiteError where isFile && error.resultCode == SQLITE_CANTOPEN {
            // A reader of a WAL file needs the -shm file too: the same cause, the same words.
            throw UnusableFile.logNotCreatable(path, error)
        }
    }

    /// `PRAGMA quick_check`: reads every page of the file and checks its structure (not that indexes match their
    /// tables, which `integrity_check` does at several times the cost). Its first row is "ok" or the first problem.
    private func checkPages() throws {
        let result = try pragmaText("PRAGMA quick_check(1)")
        guard result == "ok" else {
            throw SQLiteError(resultCode: SQLITE_CORRUPT, message: result, sql: "PRAGMA quick_check")
        }
    }

    /// Refuses a database whose file, write-ahead log or shared-memory index exists and is not a regular file. A
    /// named pipe there (a `mkfifo` in the wrong place, a restore gone wrong) made the `open` of the database (ours
    /// creating it, SQLite's read-only one for `status`, `resync` and `dlq`) wait for a writer forever, and a pipe as
    /// the log passed and blocked `OutboxStore.syncToDisk` instead. Missing files are SQLite's to create.
    private static func refuseSpecialFiles(_ path: String) throws {
        for file in [path, path + "-wal", path + "-shm"] {
            guard case .success(let kind) = FileKind.of(file), kind != .regularFile else { continue }
            throw UnusableFile.notARegularFile(file, kind)
        }
    }

    /// The magic string every SQLite database file begins with.
    private static let header = Array("SQLite format 3\u{0}".utf8)

    /// Refuses a non-empty file that does not begin with SQLite's header, read from the file itself. SQLite reads page
    /// 1 through the write-ahead log when a log is left beside the file (a process that exited without closing its
    /// connection leaves every page it wrote there), so with such a log it would open a file whose first page was
    /// overwritten as sound, and its checkpoint would then overwrite what the operator damaged. A database file that
    /// holds anything holds the header: SQLite writes page 1 before it switches to WAL. A file this process may not
    /// read is SQLite's to report.
    private static func refuseForeignHeader(_ path: String) throws {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { Glibc.close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: header.count)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0, count < header.count || bytes != header else { return }
        throw UnusableFile.damaged(
            path, SQLiteError(resultCode: SQLITE_NOTADB, message: "the file does not begin with SQLite's header"))
    }

    /// A writer never writes through a file or directory another local user controls (docs/RELIABILITY.md, "Files
    /// another user controls"): the database's directory is writable by its owner alone, who is the bridge's user or
    /// root (SQLite creates `-wal`, `-shm` and `-journal` there by name); the database is created here or checked on
    /// its descriptor, never through a link (`PrivateFile`); and its companions that exist are regular files of one
    /// of those users, with no other name. SQLite then opens the database by the path just checked, and its
    /// companions without following a link (`O_NOFOLLOW`, SQLite 3.40; `SQLITE_OPEN_NOFOLLOW` is not used: it refuses
    /// a link anywhere in the path, such as a `state_dir` that is a link of the bridge user's own). Nobody else can
    /// swap a file between the check and SQLite's open: nobody else may write the directory.
    ///
    /// Readers (`status`, `dlq list`) skip this: they change nothing, and root may read the state of the service's
    /// user.
    private static func takeOwnership(of path: String) throws {
        do {
            try OwnedPath.checkDirectory(UnusableFile.directory(of: path), rule: .privateDirectory)
            try PrivateFile.create(path)
            for companion in ["-wal", "-shm", "-journal"] { try OwnedPath.checkExistingFile(path + companion) }
        } catch let error as UnsafePathError {
            throw UnusableFile.unsafe(error)
        } catch {
            throw SQLiteError(resultCode: SQLITE_CANTOPEN, message: "cannot create \(path): \(error)")
        }
    }

    deinit {
        guard !isClosed else { return }
        cache.removeAll()  // finalises the cached statements first
        sqlite3_close_v2(raw)  // closes once every statement still held elsewhere is finalised too
    }

    /// Whether `close()` ran: every later call that would reach SQLite throws instead.
    public private(set) var isClosed = false

    /// Closes the connection now, not when the last reference goes: the last connection to a WAL database checkpoints
    /// the log into the file and removes it. A process must close its databases before it exits — a thread that
    /// still holds this object then (a blocking-pool job that resumed its caller and has not yet let go of its
    /// closure) would otherwise keep the connection open to the end, and the next open finds every page of the run in
    /// the log. Closing twice does nothing.
    ///
    /// Throws when a statement prepared with `prepare(_:)` is still alive: SQLite closes the connection only when that
    /// one is finalised, and until then the log stays.
    public func close() throws {
        guard !isClosed else { return }
        cache.removeAll()
        let outlived = sqlite3_next_stmt(raw, nil).map { sqlite3_sql($0).map { String(cString: $0) } ?? "" }
        sqlite3_close_v2(raw)
        isClosed = true
        if let outlived {
            throw SQLiteError(
                resultCode: SQLITE_BUSY, message: "\(path) stays open until a statement still alive is finalised",
                sql: outlived)
        }
    }

    /// The error of every call after `close()`.
    private func refuseClosed() throws {
        guard isClosed else { return }
        throw SQLiteError(resultCode: SQLITE_MISUSE, message: "\(path) was closed")
    }

    // MARK: - Running SQL

    /// Runs one or more statements separated by semicolons, discarding any rows (DDL, pragmas).
    public func execute(_ sql: String) throws {
        try refuseClosed()
        var errorMessage: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(raw, sql, nil, nil, &errorMessage)
        defer { sqlite3_free(errorMessage) }
        guard code == SQLITE_OK else {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(raw))
            throw SQLiteError(resultCode: code, extendedCode: sqlite3_extended_errcode(raw), message: message, sql: sql)
        }
    }

    /// Compiles one statement that the caller owns (not cached).
    public func prepare(_ sql: String) throws -> SQLiteStatement {
        try refuseClosed()
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(raw, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw SQLiteError(resultCode: code, extendedCode: sqlite3_extended_errcode(raw),
                message: String(cString: sqlite3_errmsg(raw)), sql: sql)
        }
        return SQLiteStatement(raw: statement, connection: raw)
    }

    /// The cached statement for `sql`, compiled on first use, reset and with bindings cleared.
    ///
    /// The same object comes back for the same SQL, so finish with it (step to the end or call another
    /// statement) before asking for it again.
    public func statement(for sql: String) throws -> SQLiteStatement {
        try refuseClosed()
        if let cached = cache[sql] {
            cached.reset()
            return cached
        }
        let statement = try prepare(sql)
        if cache.count >= options.statementCacheCapacity { cache.removeAll() }  // rare: a bounded set of SQL
        cache[sql] = statement
        return statement
    }

    /// How many statements are cached (for tests and metrics).
    public var cachedStatementCount: Int { cache.count }

    /// Runs `sql` (cached) with `values` bound to its parameters, to completion; returns the rows changed.
    @discardableResult
    public func run(_ sql: String, _ values: [SQLiteValue] = []) throws -> Int {
        let statement = try statement(for: sql)
        defer { statement.reset() }
        try statement.bind(values)
        while try statement.step() {}
        return changes
    }

    /// Runs `sql` (cached) with `values` bound and maps every row with `row`.
    public func query<T>(
        _ sql: String,
        _ values: [SQLiteValue] = [],
        row: (SQLiteStatement) throws -> T
    ) throws -> [T] {
        let statement = try statement(for: sql)
        defer { statement.reset() }
        try statement.bind(values)
        var rows: [T] = []
        while try statement.step() { rows.append(try row(statement)) }
        return rows
    }

    // MARK: - Connection facts

    /// The rowid of the last successful INSERT on this connection.
    public var lastInsertRowID: Int64 { isClosed ? 0 : sqlite3_last_insert_rowid(raw) }

    /// Rows changed by the last INSERT, UPDATE or DELETE on this connection.
    public var changes: Int { isClosed ? 0 : Int(sqlite3_changes64(raw)) }

    /// Whether the database file was deleted or renamed since it was opened: its path no longer names it. Writes
    /// still succeed then, into a file no later open finds. One `stat` of the path.
    public var fileHasMoved: Bool {
        var moved: Int32 = 0
        return !isClosed && sqlite3_file_control(raw, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved != 0
    }

    /// Whether a transaction is open (BEGIN without COMMIT/ROLLBACK yet).
    public var isInTransaction: Bool { !isClosed && sqlite3_get_autocommit(raw) == 0 }

    /// The journal mode in force (`wal` after a successful open).
    public var journalMode: String {
        get throws { try pragmaText("PRAGMA journal_mode").lowercased() }
    }

    /// The first column of the first row of `sql`, as text.
    func pragmaText(_ sql: String) throws -> String {
        let statement = try prepare(sql)
        guard try statement.step() else { return "" }
        return statement.string(at: 0)
    }
}

@available(*, unavailable)
extension SQLiteDatabase: Sendable {}
