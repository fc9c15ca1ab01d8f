/// A path the bridge refuses to write through because another local user controls it, or could
/// (docs/RELIABILITY.md, "Files another user controls").
///
/// Never retriable: only the operator can change the file, the directory or the configuration. Like ssh's "bad
/// owner or permissions", the message names the path, what is wrong with it and the fix.
public struct UnsafePathError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with `path`.
    public enum Problem: Sendable, Equatable {
        /// Owned by a user who is neither the bridge's nor root.
        case ownedByAnotherUser(UInt32)
        /// A directory of the bridge's state (or of a database) that group or others may write.
        case writableByGroupOrOthers(mode: UInt32)
        /// A directory others may write without the sticky bit.
        case writableByOthers(mode: UInt32)
        /// A symbolic link another user owns: they decide where it points.
        case linkOwnedByAnotherUser(UInt32)
        /// A symbolic link in place of one of the bridge's state files, which it never follows.
        case symbolicLink
        /// Not a kind of file the bridge writes to here (a directory, a socket; a named pipe in `state_dir`).
        case unexpectedKind(FileKind)
        /// A regular file with other names, which may lie where another user controls them.
        case hardLinked(count: Int)
    }

    /// The file, directory or link at fault.
    public var path: String
    /// What the bridge was checking when it found it: `path` itself, or the file or directory `path` leads to.
    public var subject: String
    /// What is wrong with it.
    public var problem: Problem
    /// The user the bridge runs as, for the message.
    public var user: UInt32

    /// Creates an error; `subject` defaults to `path`.
    public init(path: String, subject: String? = nil, problem: Problem, user: UInt32) {
        self.path = path
        self.subject = subject ?? path
        self.problem = problem
        self.user = user
    }

    /// Retrying cannot help: the operator must act.
    public var isRetriable: Bool { false }

    /// `[subject: ]path is …: fix`.
    public var description: String {
        let prefix = subject == path ? "" : "\(subject): "
        return prefix + path + " " + explanation
    }

    private var explanation: String {
        switch problem {
        case .ownedByAnotherUser(let owner):
            "is owned by \(PathTrust.describe(owner)), \(trusted): that user could redirect or read what the "
                + "bridge writes there; make it the bridge user's (chown) or use a path that is"
        case .writableByGroupOrOthers(let mode):
            "is writable by group or others (mode \(Self.octal(mode))): they could put links or files of their own "
                + "in place of the bridge's; chmod go-w it, or use a directory only the bridge's user may write"
        case .writableByOthers(let mode):
            "is writable by others without the sticky bit (mode \(Self.octal(mode))): any user could replace what "
                + "the bridge writes there; chmod o-w it (or +t, as /tmp has), or use another directory"
        case .linkOwnedByAnotherUser(let owner):
            "is a symbolic link owned by \(PathTrust.describe(owner)): that user decides where the bridge would "
                + "write; remove it, or name the file it should lead to"
        case .symbolicLink:
            "is a symbolic link: the bridge follows none in place of its own state files; put the file itself "
                + "there, or point delivery.state_dir at the directory that holds it"
        case .unexpectedKind(let kind):
            "is \(kind), not a regular file; move it aside (the bridge creates the files it is missing)"
        case .hardLinked(let count):
            "has \(count) hard links: another of its names may be in a place another user controls; give the "
                + "bridge a file of its own (copy it, then move the copy over it)"
        }
    }

    /// Whom the bridge trusts, for the message.
    private var trusted: String {
        user == 0
            ? "not root, which the bridge runs as"
            : "neither the user the bridge runs as (\(PathTrust.describe(user))) nor root"
    }

    private static func octal(_ mode: UInt32) -> String { "0" + String(mode & 0o7777, radix: 8) }
}
