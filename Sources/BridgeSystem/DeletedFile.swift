#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Whether a regular file the bridge holds open for writing still has a name. An operator's `rm` of an output file
/// (not a rotation: nothing is left at the path or under another name) leaves the descriptor writable, and what is
/// written to it then reaches nobody until something reopens the path: the NDJSON sink's file and the JSON log copy
/// ask after each write or before each line (docs/RELIABILITY.md, "Careless or hostile operators"). SQLite databases
/// ask SQLite instead (`SQLiteDatabase.fileHasMoved`).
public enum DeletedFile {
    /// Whether the regular file open at `fd` has no name left (one `fstat`); false for anything else.
    public static func isDeleted(_ fd: Int32) -> Bool {
        var status = stat()
        return fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && status.st_nlink == 0
    }
}
