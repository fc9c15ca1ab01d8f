import CSQLite

/// The version of SQLite this process runs with, as the library reports it:
/// `sqlite3_libversion()`, the version linked at run time (`--version` shows it), not the headers' at build time.
package enum SQLiteLibrary {
    /// The library's name as `--version` shows it.
    package static let name = "SQLite"
    /// The version text (`1.2.3`).
    package static var version: String { String(cString: sqlite3_libversion()) }
}
