#if canImport(Glibc)
    @preconcurrency import Glibc
#endif
import BridgeSystem

/// How the loader reads files: the configuration itself, `*_file` secrets and `ca_file`.
///
/// A seam so tests can serve files from memory; `LocalFileSystem` is the real one.
public protocol ConfigFileSystem: Sendable {
    /// The whole content of the file at `path`, or why it cannot be read ("No such file or directory").
    func readFile(atPath path: String) -> Result<[UInt8], ConfigFileProblem>
}

/// Why a file could not be read, phrased for a person.
public struct ConfigFileProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// The reason ("No such file or directory", "is a directory").
    public var reason: String

    /// Creates a problem.
    public init(reason: String) {
        self.reason = reason
    }

    /// The reason.
    public var description: String { reason }
}

/// Reads files from the local file system with `open`/`read`; relative paths are relative to the working
/// directory.
public struct LocalFileSystem: ConfigFileSystem {
    /// Files larger than this are refused (a configuration or secret file is small; this guards against
    /// pointing `token_file` at a device or a huge log by mistake).
    public static let maximumSize = 16 * 1024 * 1024

    /// How long a file that is not a regular file (a named pipe, `<(command)`, a terminal) may take to reach its end.
    /// Opening a named pipe nothing writes to used to wait for a writer forever: `validate` and `run` hung silently.
    public let pipeWait: Duration

    /// Creates the local file system reader.
    public init(pipeWait: Duration = .seconds(10)) {
        self.pipeWait = pipeWait
    }

    /// Reads the whole file.
    public func readFile(atPath path: String) -> Result<[UInt8], ConfigFileProblem> {
        // O_NONBLOCK: `open` returns at once for a named pipe without a writer (regular files ignore the flag).
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return .failure(Self.problem(errno)) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return .failure(Self.problem(errno)) }
        let kind = status.st_mode & S_IFMT
        if kind == S_IFDIR { return .failure(ConfigFileProblem(reason: "is a directory")) }
        let deadline: ContinuousClock.Instant? = kind == S_IFREG ? nil : .now + pipeWait
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            // Anything but a regular file is waited for with poll: before its first writer a named pipe reads as
            // ended, and once it has one, a read would block. A failing poll counts as readable: the read reports it.
            if let deadline, !((try? Poll.wait(fd: fd, for: .readable, until: deadline)) ?? true) {
                let what = bytes.isEmpty ? "nothing was written to it" : "it did not reach its end"
                return .failure(
                    ConfigFileProblem(
                        reason: "is \(Self.describe(kind)) and \(what) within \(pipeWait.components.seconds) s"))
            }
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                let error = errno
                if error == EINTR || error == EAGAIN { continue }
                return .failure(Self.problem(error))
            }
            if count == 0 { return .success(bytes) }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > Self.maximumSize {
                return .failure(ConfigFileProblem(reason: "is larger than \(Self.maximumSize / 1_048_576) MiB"))
            }
        }
    }

    /// "a named pipe", "a device", … for a file type of `stat`.
    private static func describe(_ kind: mode_t) -> String {
        switch kind {
        case S_IFIFO: "a named pipe"
        case S_IFCHR, S_IFBLK: "a device"
        default: "not a regular file"
        }
    }

    private static func problem(_ error: Int32) -> ConfigFileProblem {
        ConfigFileProblem(reason: strerror(error).map { String(cString: $0) } ?? "error \(error)")
    }
}
