import BridgeSystem
internal import CSQLite

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A write-ahead log deleted under another process's open connection (`rm state/*.db-wal` beside a running bridge,
/// docs/RELIABILITY.md "Careless or hostile operators"). That connection writes into the unlinked log until its check
/// (`renewIfMoved`, at most a second later) writes the log into the file and starts a new one. A connection opened
/// meanwhile found no log and started one of its own at the path, beside the other's `-shm` index: its reads failed
/// ("disk I/O error": the index points into a log the new file does not hold), a write would have gone into the wrong
/// log, and the new file hid the deletion from the writer's check, whose commits then stayed in the unlinked log:
/// lost at a crash.
extension SQLiteDatabase {
    /// A file's identity (device and inode): a log at the path may be another file than the one a connection writes.
    struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64

        /// What is at `path` (links not followed); nil when nothing is (`errno` says why).
        init?(of path: String) {
            var status = stat()
            guard lstat(path, &status) == 0 else { return nil }
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }

    /// How long an open waits for another process to start its deleted log again: a running bridge checks at most
    /// once a second, and a checkpoint a reader holds back is tried again at the next check.
    static let missingLogWait: Duration = .seconds(5)

    /// Waits while `path`'s log is missing beside an index another process holds open; throws a retriable error
    /// (`SQLITE_BUSY`) when it is still missing after `missingLogWait`, so that nothing is opened against it. It looks
    /// again every 50 ms: what it waits for is another process's check, which no wake-up of this process hears (the
    /// new log appears only at that connection's next transaction, so a watch for the file could wait for nothing).
    static func waitForAMissingLog(of path: String) throws {
        let deadline = ContinuousClock.now + missingLogWait
        while logIsMissingBesideAnIndexInUse(path) {
            guard ContinuousClock.now < deadline else {
                throw SQLiteError(
                    resultCode: SQLITE_BUSY,
                    message: "\(path)-wal is missing while another process (a running bridge) has the database open: "
                        + "its log was deleted, and it writes the log into \(path) and starts a new one at its next "
                        + "check; not opened, so as not to start a second log beside its index; try again")
            }
            usleep(50_000)
        }
    }

    /// Whether `path`'s log is gone while its `-shm` index is held open by another process.
    static func logIsMissingBesideAnIndexInUse(_ path: String) -> Bool {
        guard FileIdentity(of: path + "-wal") == nil, errno == ENOENT else { return false }
        return indexIsInUseByAnotherProcess(path + "-shm")
    }

    /// Whether another process holds the `-shm` index open: each of SQLite's connections keeps a read lock on its
    /// byte 128 (the unix VFS's `UNIX_SHM_DMS`: 120 + `SQLITE_SHM_NLOCK`) while open. `F_GETLK` does not report this
    /// process's own locks, so this process's connections count as none.
    static func indexIsInUseByAnotherProcess(_ index: String) -> Bool {
        let descriptor = Glibc.open(index, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { Glibc.close(descriptor) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 128
        lock.l_len = 1
        guard fcntl(descriptor, F_GETLK, &lock) == 0 else { return false }
        return lock.l_type != Int16(F_UNLCK)
    }
}
