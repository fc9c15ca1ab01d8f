internal import BridgeStore
internal import BridgeSystem
internal import Synchronization

extension CursorDatabase {
    /// After each write, at the state directory's periodic check and at close: when `cursor.db` was deleted or
    /// renamed while open (`rm state/cursor.db*`, a clean-up script), copies the whole database — every sink's
    /// progress, this write's included — into a new file at the path and goes on with that one
    /// (`SQLiteDatabase.renewIfMoved`, shared with `webhooks.db`; docs/RELIABILITY.md, "Careless or hostile
    /// operators"). Without it SQLite kept committing into the unlinked file, and the next start began from nothing:
    /// every sink at the newest activity id (what came since the deletion never delivered) and every snapshot taken
    /// again. One `stat` when the file is where it was.
    ///
    /// A copy that fails (the directory gone too, another file already at the path) throws: the sink's runner
    /// retries the batch with its cursor where it was and says why, as for `webhooks.db`.
    static func renewIfGone(_ database: inout SQLiteDatabase, logger: Logger) throws {
        guard let renewal = try SQLiteDatabase.renewIfMoved(&database) else { return }
        logger.warning(
            "\(renewal.warning("cursor.db", "every sink's progress was"))",
            metadata: [LogKey.path: database.path])
    }

    /// The periodic check (`StateDirectoryKeeper`): an idle bridge writes nothing, and its progress must not stay
    /// in a deleted file until the next write. Throws as a write would.
    package func keepAtPath() throws {
        try database.withLock { database in try Self.renewIfGone(&database, logger: logger) }
    }
}
