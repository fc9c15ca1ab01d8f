import BridgeSystem
import CSQLite

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

extension SQLiteDatabase {
    /// The errors `init` throws for a file the operator must act on: each message names the file and what to do.
    enum UnusableFile {
        /// Opened for writing, but the process may only read the file (its mode, its owner, a read-only mount).
        static func readOnly(_ path: String) -> SQLiteError {
            SQLiteError(
                resultCode: SQLITE_READONLY,
                message:
                    "\(path) is read-only for this process (\(writeRefusal(path) ?? "SQLite opened it read-only")):"
                    + " the bridge writes to it; make it writable by the user the bridge runs as (chown, chmod u+w)"
                    + " or mount it read-write"
            )
        }

        /// The file opened, but SQLite could not create its `-wal` or `-shm` file beside it.
        static func logNotCreatable(_ path: String, _ error: SQLiteError) -> SQLiteError {
            let directory = Self.directory(of: path)
            return SQLiteError(
                resultCode: error.resultCode,
                extendedCode: error.extendedCode,
                message:
                    "cannot create \(path)-wal and -shm in \(directory) (\(writeRefusal(directory) ?? error.message)):"
                    + " the directory must be writable by the user the bridge runs as"
            )
        }

        /// Not a database, or a damaged one.
        static func damaged(_ path: String, _ error: SQLiteError) -> SQLiteError {
            SQLiteError(
                resultCode: error.resultCode,
                extendedCode: error.extendedCode,
                message: "\(path) is damaged or not an SQLite database (\(error.message)); it was not changed: move it"
                    + " aside (or restore it from a backup) and start again, which begins with an empty one"
            )
        }

        /// `file` (the database, its `-wal` or its `-shm`) is a named pipe, a device, …: opening it could wait forever.
        static func notARegularFile(_ file: String, _ kind: FileKind) -> SQLiteError {
            SQLiteError(
                resultCode: SQLITE_CANTOPEN,
                message: "\(file) is \(kind), not a regular file; it was not opened: move it aside (the bridge"
                    + " creates the files it is missing)")
        }

        /// `error`'s file or directory is one another local user controls (`takeOwnership(of:)`).
        static func unsafe(_ error: UnsafePathError) -> SQLiteError {
            SQLiteError(resultCode: SQLITE_CANTOPEN, message: error.description)
        }

        /// Why this process may not write to `path`, or nil when `access` allows it.
        private static func writeRefusal(_ path: String) -> String? {
            access(path, W_OK) == 0 ? nil : String(cString: strerror(errno))
        }

        /// The directory `path` lies in.
        static func directory(of path: String) -> String {
            guard let slash = path.lastIndex(of: "/") else { return "." }
            return slash == path.startIndex ? "/" : String(path[..<slash])
        }
    }
}
