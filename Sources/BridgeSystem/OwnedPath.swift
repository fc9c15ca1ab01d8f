#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The checks behind "the bridge never writes through a file or directory another local user controls"
/// (docs/RELIABILITY.md, "Files another user controls") for the paths it is configured with: `delivery.state_dir`,
/// NDJSON outputs and the directories of SQLite databases. `PrivateFile` opens the files themselves.
///
/// A path is followed one component at a time, as the kernel follows it: every symbolic link on the way must belong to
/// a trusted user (`PathTrust`), since its owner decides where it leads, and every directory the real path passes
/// through must belong to one and be writable by others only with the sticky bit (as `/tmp` is) — else they could
/// rename the next directory away and put one of their own in its place. A directory above the bridge's own may be
/// writable by its group: who is in it is the operator's choice (a volume Kubernetes mounts for an `fsGroup` is).
public enum OwnedPath {
    /// What the directory a file lies in may allow others.
    public enum DirectoryRule: Sendable {
        /// `delivery.state_dir` and the directory of a database: writable by its owner only. SQLite creates its
        /// `-wal`, `-shm` and `-journal` there by name, and a sticky bit does not stop another user from creating
        /// one of them first.
        case privateDirectory
        /// The directory of an output file: writable by others only with the sticky bit, which keeps them from
        /// renaming or removing what they do not own. The file itself is checked as it is opened.
        case sharedDirectory
    }

    /// More links than the kernel follows in one path (`ELOOP` beyond 40).
    private static let maximumLinks = 40

    /// Checks directory `path` by `rule`, every directory above it and every link on the way. With `allowMissing`,
    /// a path whose end does not exist yet passes when what does exist is safe to create the rest in.
    public static func checkDirectory(
        _ path: String, rule: DirectoryRule, allowMissing: Bool = false, trust: PathTrust = .current
    ) throws {
        let walk = try resolve(path, trust: trust)
        guard walk.missing.isEmpty else {
            guard allowMissing else { throw SystemError(operation: "stat \(path)", errno: ENOENT) }
            try checkParents(of: walk.real, including: true, subject: path, trust: trust)
            return
        }
        try checkParents(of: walk.real, including: false, subject: path, trust: trust)
        try check(walk.real, shownAs: walk.followedLink ? walk.real : path, subject: path, rule: rule, trust: trust)
    }

    /// Checks the links and directories on the way to a file the bridge writes (an NDJSON output) and the directory
    /// it lies in (`sharedDirectory`); returns the path to open it by: `path` itself, or where its links lead, so
    /// that `PrivateFile` can open it without following links (`O_NOFOLLOW`) and check the file itself.
    public static func resolveFile(_ path: String, trust: PathTrust = .current) throws -> String {
        let walk = try resolve(path, trust: trust)
        // The file may be missing (it is created), the directory it goes into may not.
        guard walk.missing.count <= 1 else { throw SystemError(operation: "open \(path)", errno: ENOENT) }
        let directory = walk.missing.isEmpty ? parent(of: walk.real) : walk.real
        try checkParents(of: directory, including: false, subject: path, trust: trust)
        try check(directory, shownAs: directory, subject: path, rule: .sharedDirectory, trust: trust)
        guard walk.followedLink else { return path }
        return walk.missing.first.map { join(walk.real, $0) } ?? walk.real
    }

    /// Checks a file beside a database that SQLite opens itself (`-wal`, `-shm`, `-journal`), without opening it:
    /// missing, or a regular file of a trusted user with no other name; never a link.
    public static func checkExistingFile(_ path: String, trust: PathTrust = .current) throws(UnsafePathError) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }  // missing: SQLite creates it, 0600 like the database
        if let problem = problem(ofFile: status, kinds: [.regularFile], trust: trust) {
            throw UnsafePathError(path: path, problem: problem, user: trust.user)
        }
    }

    /// What is wrong with a file the bridge writes, from its `lstat` or `fstat`; nil when nothing is. A link is
    /// refused whoever owns it: the bridge opens files without following one (a trusted link in an output path was
    /// followed by `resolveFile` already).
    static func problem(ofFile status: stat, kinds: Set<FileKind>, trust: PathTrust) -> UnsafePathError.Problem? {
        if status.st_mode & S_IFMT == S_IFLNK {
            return trust.trusts(status.st_uid) ? .symbolicLink : .linkOwnedByAnotherUser(status.st_uid)
        }
        if !trust.trusts(status.st_uid) { return .ownedByAnotherUser(status.st_uid) }
        let kind = FileKind(mode: status.st_mode)
        if !kinds.contains(kind) { return .unexpectedKind(kind) }
        if kind == .regularFile && status.st_nlink > 1 { return .hardLinked(count: Int(status.st_nlink)) }
        return nil
    }

    // MARK: - Walking a path

    /// Where a path leads: the real directory reached (no links, no `.` or `..`), the components that do not exist
    /// from there on, and whether a link was followed to get there.
    private struct Walk {
        var real: String
        var missing: [Substring]
        var followedLink: Bool
    }

    /// Follows `path` as the kernel would, refusing a link another user owns; stops at the first missing component.
    private static func resolve(_ path: String, trust: PathTrust) throws -> Walk {
        var real = path.hasPrefix("/") ? "/" : currentWorkingDirectory()
        var pending = Array(path.split(separator: "/").reversed())  // a stack: the next component is last
        var links = 0
        while let name = pending.popLast() {
            if name == "." { continue }
            if name == ".." {
                real = parent(of: real)
                continue
            }
            let next = join(real, name)
            var status = stat()
            guard lstat(next, &status) == 0 else {
                let code = errno
                guard code == ENOENT else { throw SystemError(operation: "lstat \(next)", errno: code) }
                return Walk(real: real, missing: [name] + pending.reversed(), followedLink: links > 0)
            }
            guard status.st_mode & S_IFMT == S_IFLNK else {
                real = next
                continue
            }
            guard trust.trusts(status.st_uid) else {
                throw UnsafePathError(
                    path: next, subject: path, problem: .linkOwnedByAnotherUser(status.st_uid), user: trust.user)
            }
            links += 1
            guard links <= maximumLinks else { throw SystemError(operation: "resolve \(path)", errno: ELOOP) }
            let target = try readLink(next)
            if target.hasPrefix("/") { real = "/" }
            pending.append(contentsOf: target.split(separator: "/").reversed())
        }
        return Walk(real: real, missing: [], followedLink: links > 0)
    }

    /// Checks every directory above real path `path` (from `/` down), and `path` itself when `including`, by the rule
    /// for parents (`sharedDirectory`).
    private static func checkParents(of path: String, including: Bool, subject: String, trust: PathTrust) throws {
        var prefix = "/"
        try check(prefix, shownAs: prefix, subject: subject, rule: .sharedDirectory, trust: trust)
        let components = path.split(separator: "/")
        for component in components.dropLast(including ? 0 : 1) {
            prefix = join(prefix, component)
            try check(prefix, shownAs: prefix, subject: subject, rule: .sharedDirectory, trust: trust)
        }
    }

    /// Checks the directory at real path `path` (named `shownAs` in an error) by `rule`.
    private static func check(
        _ path: String, shownAs shown: String, subject: String, rule: DirectoryRule, trust: PathTrust
    ) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw SystemError(operation: "lstat \(path)", errno: errno) }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw SystemError(operation: "open \(shown)", errno: ENOTDIR) }
        let mode = UInt32(status.st_mode & 0o7777)
        let othersMayReplace = mode & 0o002 != 0 && mode & UInt32(S_ISVTX) == 0
        let problem: UnsafePathError.Problem? =
            if !trust.trusts(status.st_uid) {
                .ownedByAnotherUser(status.st_uid)
            } else {
                switch rule {
                case .privateDirectory: mode & 0o022 != 0 ? .writableByGroupOrOthers(mode: mode) : nil
                case .sharedDirectory: othersMayReplace ? .writableByOthers(mode: mode) : nil
                }
            }
        if let problem { throw UnsafePathError(path: shown, subject: subject, problem: problem, user: trust.user) }
    }

    private static func readLink(_ path: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { throw SystemError(operation: "readlink \(path)", errno: errno) }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func join(_ directory: String, _ name: Substring) -> String {
        directory == "/" ? "/" + name : directory + "/" + name
    }

    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}
