/// A failed SQLite call: the result codes, SQLite's message, and the statement (shortened) it came from.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The primary result code (`SQLITE_BUSY` = 5, `SQLITE_FULL` = 13, …).
    public var resultCode: Int32
    /// The extended result code (`SQLITE_BUSY_SNAPSHOT`, `SQLITE_IOERR_FSYNC`, …); equals `resultCode`
    /// when SQLite gave no detail.
    public var extendedCode: Int32
    /// SQLite's message for the failure.
    public var message: String
    /// The SQL being run, at most `maxSQLLength` characters, or empty.
    public var sql: String

    /// How much SQL an error keeps (enough to recognise the statement, never whole data dumps).
    public static let maxSQLLength = 200

    /// Creates an error; `sql` is shortened here.
    public init(resultCode: Int32, extendedCode: Int32? = nil, message: String, sql: String = "") {
        self.resultCode = resultCode & 0xFF
        self.extendedCode = extendedCode ?? resultCode
        self.message = message
        self.sql = sql.count > Self.maxSQLLength ? String(sql.prefix(Self.maxSQLLength)) + "…" : sql
    }

    /// Another connection (the `dlq` command, a second bridge) held a lock past the busy timeout.
    public var isBusy: Bool { resultCode == 5 || resultCode == 6 }  // SQLITE_BUSY, SQLITE_LOCKED
    /// The disk (or `max_page_count`) is full: nothing was written, and the caller must stop and say so.
    public var isFull: Bool { resultCode == 13 }  // SQLITE_FULL
    /// The file is damaged or not a database.
    public var isCorrupt: Bool { resultCode == 11 || resultCode == 26 }  // SQLITE_CORRUPT, SQLITE_NOTADB
    /// The connection may only read: the file, its directory or its mount refuses writes to this process.
    public var isReadOnly: Bool { resultCode == 8 }  // SQLITE_READONLY
    /// The file (or its `-wal`/`-shm` beside it) could not be opened or created.
    public var cannotOpen: Bool { resultCode == 14 }  // SQLITE_CANTOPEN
    /// The operator must act on the file (read-only, cannot be opened, damaged): retrying cannot help, and the
    /// message (from `SQLiteDatabase.init`) names the file and what to do.
    public var isUnusableFile: Bool { isReadOnly || cannotOpen || isCorrupt }
    /// A UNIQUE, NOT NULL, CHECK or foreign-key constraint failed.
    public var isConstraint: Bool { resultCode == 19 }  // SQLITE_CONSTRAINT
    /// Whether trying again later can succeed (a lock held by another connection).
    public var isRetriable: Bool { isBusy }

    /// What to tell the operator: the message alone for a file they must act on (`SQLiteDatabase.init` names the
    /// file and what to do in it), else `description`.
    public var reason: String { isUnusableFile ? message : description }

    /// `SQLite error N (extended M): message [sql]`.
    public var description: String {
        var text = "SQLite error \(resultCode) (extended \(extendedCode)): \(message)"
        if !sql.isEmpty { text += " [\(sql)]" }
        return text
    }
}
