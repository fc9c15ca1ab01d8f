#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Files and directories that hold event data (docs/RELIABILITY.md, "Files and transport"): `delivery.state_dir`
/// and its parents are created 0700, cursor, outbox and NDJSON files 0600 — whatever the process umask, because
/// the mode is set with `fchmod`/`chmod` after creation rather than left to `open`/`mkdir`, whose mode the umask
/// can narrow to an unusable one (or, with a lax umask, the libraries' defaults would leave files readable).
///
/// Only what the bridge creates gets these modes. Existing files and directories keep theirs: the operator may
/// have granted a backup or log-shipping group access on purpose (`looseMode` lets start-up warn about them).
public enum PrivateFile {
    /// The mode of files the bridge creates.
    public static let fileMode: UInt32 = 0o600
    /// The mode of directories the bridge creates.
    public static let directoryMode: UInt32 = 0o700

    /// Opens `path` with `flags` (which must not include `O_CREAT`); when it does not exist, creates it 0600.
    public static func open(_ path: String, flags: Int32) throws(SystemError) -> Int32 {
        while true {
            let existing = Glibc.open(path, flags | O_CLOEXEC)
            if existing >= 0 { return existing }
            var code = errno
            guard code == ENOENT else { throw SystemError(operation: "open \(path)", errno: code) }
            let created = Glibc.open(path, flags | O_CREAT | O_EXCL | O_CLOEXEC, fileMode)
            if created >= 0 {
                guard fchmod(created, fileMode) == 0 else {
                    code = errno
                    Glibc.close(created)
                    throw SystemError(operation: "chmod \(path)", errno: code)
                }
                return created
            }
            code = errno
            // Another process created it between the two opens: open that one.
            guard code == EEXIST else { throw SystemError(operation: "create \(path)", errno: code) }
        }
    }

    /// Creates `path` empty and 0600 when it does not exist (for a library that opens it afterwards, such as
    /// SQLite, whose own default would be 0644 less the umask).
    public static func create(_ path: String) throws(SystemError) {
        let descriptor = try open(path, flags: O_RDONLY)
        Glibc.close(descriptor)
    }

    /// Creates directory `path` and every missing parent, each 0700; existing ones are left as they are.
    public static func createDirectory(_ path: String) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") where !component.isEmpty {
            prefix += component
            if mkdir(prefix, directoryMode) == 0 {
                guard chmod(prefix, directoryMode) == 0 else {
                    throw SystemError(operation: "chmod \(prefix)", errno: errno)
                }
            } else {
                let code = errno
                if code != EEXIST { throw SystemError(operation: "mkdir \(prefix)", errno: code) }
            }
            prefix += "/"
        }
    }

    /// The permission bits of `path` when group or others have any access to it; nil when they have none or the
    /// path does not exist.
    public static func looseMode(_ path: String) -> UInt32? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        let mode = UInt32(status.st_mode & 0o777)
        return mode & 0o077 == 0 ? nil : mode
    }
}
