#if canImport(Glibc)
    @preconcurrency import Glibc
#endif
import BridgeSystem

/// How the loader reads files: the configuration itself, `*_file` secrets, and the files libraries open later
/// (`ca_file`, `credentials_file`, Kafka's file properties).
///
/// A seam so tests can serve files from memory; `LocalFileSystem` is the real one.
public protocol ConfigFileSystem: Sendable {
    /// The whole content of the file at `path`, or why it cannot be read ("No such file or directory"). `use` says
    /// whether anything but a regular file will do.
    func readFile(atPath path: String, use: ConfigFileUse) -> Result<[UInt8], ConfigFileProblem>
}

extension ConfigFileSystem {
    /// The whole content of a file read once, here (the configuration, a `*_file` secret).
    public func readFile(atPath path: String) -> Result<[UInt8], ConfigFileProblem> {
        readFile(atPath: path, use: .readOnce)
    }
}

/// Who reads a file named in the configuration, and so what kind of file will do.
public enum ConfigFileUse: Sendable, Equatable {
    /// The loader reads it once and keeps the content: the configuration itself, `*_file` secrets. A pipe
    /// (`<(command)`, `/dev/stdin`, a named pipe) will do if it is written to its end within the pipe wait.
    case readOnce
    /// A C library opens the path again itself, later and more than once: libcurl and OpenSSL a CA file at each
    /// connection, libnats a credentials file at each connect, librdkafka its files as a producer is made. Only a
    /// regular file will do: a pipe read here would be drained (or block the library's own `open` forever, waiting
    /// for a writer, on a thread nothing interrupts), and a device holds no certificate. Anything else is refused at
    /// once, without being opened (opening a device can have effects, such as rewinding a tape).
    case reopenedByLibrary
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

    /// The path is a directory (some libraries take one instead of a file, such as librdkafka's CA location).
    public static let directory = ConfigFileProblem(reason: "is a directory")

    /// Nothing is at the path (`ENOENT`).
    public static let missing = ConfigFileProblem(reason: "No such file or directory")
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
    public func readFile(atPath path: String, use: ConfigFileUse) -> Result<[UInt8], ConfigFileProblem> {
        if use == .reopenedByLibrary {
            // Looked at before it is opened: a device or a pipe is refused without being touched.
            switch FileKind.of(path) {
            case .failure(let error): return .failure(Self.problem(error.errno))
            case .success(let kind): if let problem = Self.notARegularFile(kind) { return .failure(problem) }
            }
        }
        // O_NONBLOCK: `open` returns at once for a named pipe without a writer (regular files ignore the flag).
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return .failure(Self.problem(errno)) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return .failure(Self.problem(errno)) }
        let kind = FileKind(mode: status.st_mode)
        if kind == .directory { return .failure(.directory) }
        // Replaced between `stat` and `open`: still refused, and never waited for.
        if use == .reopenedByLibrary, let problem = Self.notARegularFile(kind) { return .failure(problem) }
        let deadline: ContinuousClock.Instant? = kind == .regularFile ? nil : .now + pipeWait
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            // Anything but a regular file is waited for with poll: before its first writer a named pipe reads as
            // ended, and once it has one, a read would block. A failing poll counts as readable: the read reports it.
            if let deadline, !((try? Poll.wait(fd: fd, for: .readable, until: deadline)) ?? true) {
                let what = bytes.isEmpty ? "nothing was written to it" : "it did not reach its end"
                return .failure(
                    ConfigFileProblem(
                        reason: "is \(kind) and \(what) within \(pipeWait.components.seconds) s"))
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

    /// Why a file of `kind` cannot be handed to a library that opens it again later; nil for a regular file.
    private static func notARegularFile(_ kind: FileKind) -> ConfigFileProblem? {
        switch kind {
        case .regularFile: nil
        case .directory: .directory
        default:
            ConfigFileProblem(reason: "is \(kind), not a regular file (the library that uses it opens the path again)")
        }
    }

    private static func problem(_ error: Int32) -> ConfigFileProblem {
        if error == ENOENT { return .missing }
        return ConfigFileProblem(reason: strerror(error).map { String(cString: $0) } ?? "error \(error)")
    }
}
