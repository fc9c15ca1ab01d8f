internal import BridgeStore
internal import BridgeSystem

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

extension CursorDatabase {
    /// After each write: when `cursor.db` was deleted or renamed while open (`rm state/cursor.db*`, a clean-up
    /// script), copies the whole database — every sink's progress, this write's included — into a new file at the
    /// path and goes on with that one (docs/RELIABILITY.md, "Careless or hostile operators"). Without it SQLite kept
    /// committing into the unlinked file, and the next start began from nothing: every sink at the newest activity
    /// id (what came since the deletion never delivered) and every snapshot taken again. One `stat` per write.
    ///
    /// A copy that fails (the directory gone too, another file already at the path) throws: the sink's runner
    /// retries the batch with its cursor where it was and says why, as for `webhooks.db` (`OutboxStore.syncToDisk`).
    static func renewIfGone(_ database: inout SQLiteDatabase, path: String, logger: Logger) throws {
        guard database.fileHasMoved else { return }
        do {
            // 0600 and never through a link, as at the first open; `VACUUM INTO` fills an empty file.
            try PrivateFile.create(path)
            _ = try database.run("VACUUM INTO ?", [.text(path)])
            try syncToDisk(path)
        } catch {
            throw SQLiteError(
                resultCode: 10,
                message: "\(path) was deleted or moved while the bridge runs, and the progress could not be copied "
                    + "into a new file there (\(error)): the sinks wait at their cursors; restore the directory or "
                    + "restart the bridge")
        }
        // Closed before the new file is opened: closing checkpoints the old log and removes it by its name, which
        // the new file's log will have.
        try database.close()
        for suffix in ["-wal", "-shm"] { _ = unlink(path + suffix) }  // left by the old file, if it kept them
        database = try SQLiteDatabase(path: path, options: .init(synchronous: .full))
        logger.warning(
            "cursor.db was deleted or moved while the bridge ran; every sink's progress was copied into a new file at"
                + " its path, and nothing is repeated or lost",
            metadata: [LogKey.path: path])
    }

    /// `VACUUM INTO` does not fsync what it wrote: the copy must be on disk before the next batch counts on it.
    private static func syncToDisk(_ path: String) throws {
        let descriptor = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError(operation: "open", errno: errno) }
        defer { Glibc.close(descriptor) }
        guard fsync(descriptor) == 0 else { throw SystemError(operation: "fsync", errno: errno) }
    }
}
