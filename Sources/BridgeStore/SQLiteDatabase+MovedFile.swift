import BridgeSystem
internal import CSQLite

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

extension SQLiteDatabase {
    /// What `renewIfMoved` did.
    public enum Renewal: Sendable, Equatable {
        /// The database's file was gone from its path: it was copied whole into a new file there.
        case copied
        /// Its write-ahead log alone was deleted: every commit in it was written into the file, and a new log started.
        case logStartedAgain

        /// The warning to log, for the file called `name` whose `contents` (with their verb: "the outbox were") are
        /// safe again.
        public func warning(_ name: String, _ contents: String) -> String {
            switch self {
            case .copied:
                "\(name) was deleted or moved while the bridge ran; \(contents) copied into a new file at its path, "
                    + "and nothing is repeated or lost"
            case .logStartedAgain:
                "\(name)-wal was deleted while the bridge ran; \(contents) written from it into \(name) and a new log "
                    + "started, and nothing is repeated or lost"
            }
        }
    }

    /// When the database's file was deleted or renamed while open (`rm state/*.db*`, a clean-up script), copies the
    /// whole database — every write so far — into a new file at the path and replaces `database` with a connection
    /// to it; when its write-ahead log alone was deleted (`rm state/*.db-wal`, taken for a leftover), writes every
    /// commit into the file and starts a new log (docs/RELIABILITY.md, "Careless or hostile operators"). Returns what
    /// it did, nil when both are where they were (one `stat` and one `lstat`). Without it SQLite keeps committing into
    /// a file no later open finds: `cursor.db`'s progress and `webhooks.db`'s undelivered rows and dead letters were
    /// gone at the next start, or after a crash when only the log was deleted.
    ///
    /// The copy is a 0600 file never made through a link, as at the first open (`PrivateFile.create`), filled by
    /// `VACUUM INTO` and fsynced before the old connection is closed. A copy that cannot be made — the directory gone
    /// too, another non-empty file already at the path — throws (IO error), and `database` stays the old connection:
    /// the caller's write or sync fails, its sink retries, and a later call tries again. So does a checkpoint another
    /// process's reader holds up.
    public static func renewIfMoved(_ database: inout SQLiteDatabase) throws -> Renewal? {
        if database.fileHasMoved {
            try copyToThePath(&database)
            return .copied
        }
        guard database.logWasDeleted else { return nil }
        try startTheLogAgain(&database)
        return .logStartedAgain
    }

    private static func copyToThePath(_ database: inout SQLiteDatabase) throws {
        let path = database.path
        do {
            try PrivateFile.create(path)
            _ = try database.run("VACUUM INTO ?", [.text(path)])
            try syncToDisk(path)
        } catch {
            throw SQLiteError(
                resultCode: SQLITE_IOERR,
                message: "\(path) was deleted or moved while the bridge runs, and what it holds could not be copied "
                    + "into a new file there (\(error)): the sinks wait and retry; make the directory writable "
                    + "again (a restart now would start without it)")
        }
        // Closed before the new file is opened: closing checkpoints the old log and removes it by its name, which
        // the new file's log will have.
        try database.close()
        for suffix in ["-wal", "-shm"] { _ = unlink(path + suffix) }  // left by the old file, if it kept them
        database = try SQLiteDatabase(path: path, options: database.options)
    }

    /// The connection still commits into the unlinked log, which only it can read. A checkpoint of the whole log
    /// writes every commit into the file (still at its path); the connection, closed (the last: SQLite removes the
    /// `-shm` index of the deleted log) and opened again, starts a new log at the path.
    private static func startTheLogAgain(_ database: inout SQLiteDatabase) throws {
        let path = database.path
        do {
            try database.checkpointTheWholeLog()
            try syncToDisk(path)
        } catch {
            throw SQLiteError(
                resultCode: SQLITE_IOERR,
                message: "\(path)-wal was deleted while the bridge runs, and what it held could not be written into "
                    + "\(path) yet (\(error)): the sinks wait and retry")
        }
        try database.close()
        database = try SQLiteDatabase(path: path, options: database.options)
    }

    /// Writes every commit in the log into the file and empties the log; throws when a reader (another process)
    /// holds it back.
    private func checkpointTheWholeLog() throws {
        let statement = try prepare("PRAGMA wal_checkpoint(TRUNCATE)")
        // One row: busy (1 when a reader held the checkpoint back), the log's frames, the frames written.
        guard try statement.step(), statement.int64(at: 0) == 0 else {
            throw SQLiteError(resultCode: SQLITE_BUSY, message: "another process reads the database")
        }
    }

    /// Whether the write-ahead log is gone from beside the open file: a connection that writes keeps it there (SQLite
    /// removes it only when the last connection closes). Another file at its path counts as gone: another process
    /// that opened the database while the log was missing started one of its own there (`SQLiteDatabase+MissingLog`),
    /// and this connection still writes the unlinked one.
    var logWasDeleted: Bool {
        guard !isClosed, !options.readOnly, path != ":memory:", !path.isEmpty else { return false }
        guard let found = FileIdentity(of: path + "-wal") else { return errno == ENOENT }
        guard let logIdentity else {
            logIdentity = found  // the log did not exist yet when the connection opened
            return false
        }
        return found != logIdentity
    }

    /// `VACUUM INTO` and a checkpoint do not fsync what they wrote: the file must be on disk before anything counts
    /// on it.
    private static func syncToDisk(_ path: String) throws {
        let descriptor = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError(operation: "open", errno: errno) }
        defer { Glibc.close(descriptor) }
        guard fsync(descriptor) == 0 else { throw SystemError(operation: "fsync", errno: errno) }
    }
}
