/// One SQLite value, for binding parameters and for reading columns generically.
public enum SQLiteValue: Sendable, Equatable {
    /// A 64-bit integer.
    case integer(Int64)
    /// A double.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob([UInt8])
    /// SQL NULL.
    case null
}

/// A numbered schema change, applied once (see `SQLiteDatabase.migrate(_:)`).
public struct SQLiteMigration: Sendable {
    /// The `PRAGMA user_version` this migration brings the file to; versions start at 1 and increase.
    public var version: Int
    /// The statements to run (several, separated by semicolons, are allowed).
    public var sql: String

    /// Creates a migration.
    public init(version: Int, sql: String) {
        self.version = version
        self.sql = sql
    }
}
