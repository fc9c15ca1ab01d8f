#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// What a path names, as `stat` tells (symbolic links followed), so a file that must be a regular file can be refused
/// before it is opened. Opening a named pipe waits for the other end forever (a reader's `open` for a writer), and
/// opening a device can have effects of its own: where the bridge or a library it hands the path to expects a file
/// (`bridge.yaml`'s CA and credentials files, the SQLite databases in `delivery.state_dir`), asking first turns an
/// operator's mistake into a message instead of a hang.
public enum FileKind: Sendable, Equatable, CustomStringConvertible {
    case regularFile
    case directory
    case namedPipe
    case device
    case socket
    case other

    /// The kind of a `stat` mode.
    public init(mode: UInt32) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regularFile
        case S_IFDIR: self = .directory
        case S_IFIFO: self = .namedPipe
        case S_IFCHR, S_IFBLK: self = .device
        case S_IFSOCK: self = .socket
        default: self = .other
        }
    }

    /// The kind of what `path` names, or why `stat` failed (`ENOENT`: nothing is there).
    public static func of(_ path: String) -> Result<FileKind, SystemError> {
        var status = stat()
        guard stat(path, &status) == 0 else { return .failure(SystemError(operation: "stat \(path)", errno: errno)) }
        return .success(FileKind(mode: status.st_mode))
    }

    /// "a named pipe", "a device", … for messages ("is a named pipe, not a regular file").
    public var description: String {
        switch self {
        case .regularFile: "a regular file"
        case .directory: "a directory"
        case .namedPipe: "a named pipe"
        case .device: "a device"
        case .socket: "a socket"
        case .other: "a special file"
        }
    }
}
