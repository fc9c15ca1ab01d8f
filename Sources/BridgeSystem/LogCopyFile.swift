#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A file that receives a JSON copy of every log line (`DIRECTUS_BRIDGE_JSON_LOG_FILE`, docs/configuration.md
/// "Log fields"): people read text on stderr while a log shipper, or the test suite's schema check, reads typed JSON.
///
/// Opened for appending like any file the bridge writes (0600 when created, never through another user's file or
/// link); one `write(2)` per line, which `O_APPEND` keeps whole between threads and processes.
public final class LogCopyFile: Sendable {
    /// The descriptor this object owns until `deinit`.
    let fd: Int32
    /// The path, for error messages.
    public let path: String

    /// Opens (or creates) `path` for appending.
    public init(path: String) throws {
        self.path = path
        fd = try PrivateFile.open(path, flags: O_WRONLY | O_APPEND)
    }

    /// Appends one finished line (with its newline).
    func append(_ bytes: [UInt8]) { FileDescriptorWriter.writeAll(fd: fd, bytes: bytes) }

    deinit { close(fd) }
}
