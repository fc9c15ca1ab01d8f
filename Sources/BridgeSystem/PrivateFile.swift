#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Files and directories that hold event data (docs/RELIABILITY.md, "Files and transport"): `delivery.state_dir`
/// and its parents are created 0700, cursor, outbox and NDJSON files 0600 — whatever the process umask, because
/// the mode is set with `fchmod`/`chmod` after creation rather than left to `open`/`mkdir`, whose mode the umask
/// can narrow to an unusable one (or, with a lax umask, the libraries' defaults would leave files readable).
///
/// Only what the bridge creates gets these modes. Existing files and directories keep theirs: the operator may
/// have granted a backup or log-shipping group access on purpose (`looseMode` lets start-up warn about them). What
/// the bridge refuses to write through at all is `open`'s and `OwnedPath`'s to say.
public enum PrivateFile {
    /// The mode of files the bridge creates.
    public static let fileMode: UInt32 = 0o600
    /// The mode of directories the bridge creates.
    public static let directoryMode: UInt32 = 0o700

    /// Opens `path` with `flags` (which must not include `O_CREAT`) for the bridge to write through it; when it does
    /// not exist, creates it 0600 (`O_CREAT | O_EXCL`: never through a link, never a file someone else made first).
    ///
    /// An existing file is opened without following a link (`O_NOFOLLOW`) and checked on the descriptor
    /// (docs/RELIABILITY.md, "Files another user controls"): owned by the bridge's user or root (`trust`), of one of
    /// `kinds`, and when regular, with no other name (a hard link elsewhere could be another user's way in). Anything
    /// else is an `UnsafePathError`, a failing call a `SystemError`.
    public static func open(
        _ path: String, flags: Int32, kinds: Set<FileKind> = [.regularFile], trust: PathTrust = .current
    ) throws -> Int32 {
        while true {
            let created = Glibc.open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, fileMode)
            if created >= 0 {
                guard fchmod(created, fileMode) == 0 else {
                    let code = errno
                    Glibc.close(created)
                    throw SystemError(operation: "chmod \(path)", errno: code)
                }
                return created
            }
            var code = errno
            guard code == EEXIST else { throw SystemError(operation: "create \(path)", errno: code) }
            let existing = Glibc.open(path, flags | O_NOFOLLOW | O_CLOEXEC)
            guard existing >= 0 else {
                code = errno
                if code == ENOENT { continue }  // removed since: create it after all
                if code == ELOOP { try refuseLink(path, trust: trust) }
                throw SystemError(operation: "open \(path)", errno: code)
            }
            var status = stat()
            guard fstat(existing, &status) == 0 else {
                code = errno
                Glibc.close(existing)
                throw SystemError(operation: "fstat \(path)", errno: code)
            }
            if let problem = OwnedPath.problem(ofFile: status, kinds: kinds, trust: trust) {
                Glibc.close(existing)
                throw UnsafePathError(path: path, problem: problem, user: trust.user)
            }
            return existing
        }
    }

    /// `O_NOFOLLOW` refused `path` (`ELOOP`): when a link is there, the refusal names its owner.
    private static func refuseLink(_ path: String, trust: PathTrust) throws {
        var status = stat()
        // Not a link (gone again, or a loop in a directory above): the caller reports the open's own error.
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK,
            let problem = OwnedPath.problem(ofFile: status, kinds: [], trust: trust)
        else { return }
        throw UnsafePathError(path: path, problem: problem, user: trust.user)
    }

    /// Creates `path` empty and 0600 when it does not exist (for a library that opens it afterwards, such as
    /// SQLite, whose own default would be 0644 less the umask); an existing one is checked as `open` checks it.
    public static func create(_ path: String, trust: PathTrust = .current) throws {
        let descriptor = try open(path, flags: O_RDONLY, trust: trust)
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
