import BridgeSystem
internal import CSQLite

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

extension SQLiteDatabase {
    /// When the database's file was deleted or renamed while open (`rm state/*.db*`, a clean-up script), copies the
    /// whole database — every write so far — into a new file at the path and replaces `database` with a connection
    /// to it; returns whether it did (docs/RELIABILITY.md, "Careless or hostile operators"). Without it SQLite keeps
    /// committing into a file no later open finds: `cursor.db`'s progress and `webhooks.db`'s undelivered rows and
    /// dead letters were gone at the next start. One `stat` when the file is where it was.
    ///
    /// The copy is a 0600 file never made through a link, as at the first open (`PrivateFile.create`), filled by
    /// `VACUUM INTO` and fsynced before the old connection is closed. A copy that cannot be made — the directory gone
    /// too, another non-empty file already at the path — throws (IO error), and `database` stays the old connection:
    /// the caller's write or sync fails, its sink retries, and a later call tries again.
    public static func renewIfMoved(_ database: inout SQLiteDatabase) throws -> Bool {
        guard database.fileHasMoved else { return false }
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
        return true
    }

    /// `VACUUM INTO` does not fsync what it wrote: the copy must be on disk before anything counts on it.
    private static func syncToDisk(_ path: String) throws {
        let descriptor = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError(operation: "open", errno: errno) }
        defer { Glibc.close(descriptor) }
        guard fsync(descriptor) == 0 else { throw SystemError(operation: "fsync", errno: errno) }
    }
}
