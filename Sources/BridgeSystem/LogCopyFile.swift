import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A file that receives a JSON copy of every log line (`DIRECTUS_BRIDGE_JSON_LOG_FILE`, docs/configuration.md
/// "Log fields"): people read text on stderr while a log shipper, or the test suite's schema check, reads typed JSON.
///
/// Opened for appending like any file the bridge writes (0600 when created, never through another user's file or
/// link); one `write(2)` per line, which `O_APPEND` keeps whole between threads and processes. After a SIGHUP
/// (logrotate moved the file) the next line reopens the path the same way first, so no line written after the
/// signal was delivered goes to the moved file.
///
/// A line is whole or absent: a write that fails part-way (a full disk, a file size limit) is cut back to where the
/// line began (`FileRewindPoint`), where before it left a torn line that the next line was glued to. A copy deleted
/// while open (`rm`, not a rotation) is noticed before each line (`DeletedFile`) and the line goes to a new file at
/// the path, made as the first; before, every later line went into the deleted file until the next SIGHUP
/// (docs/RELIABILITY.md, "Careless or hostile operators").
public final class LogCopyFile: Sendable {
    private struct State {
        var fd: Int32
        /// The count of SIGHUPs when `fd` was opened, or when a reopen last failed.
        var seen: Int
        /// A reopen of the deleted copy failed and was said: the next lines try again without saying it again.
        var deletedReopenFailed = false
    }

    /// The path, for error messages.
    public let path: String
    private let hangUps: HangUpCount
    private let state: Mutex<State>

    /// Opens (or creates) `path` for appending; `hangUps` counts the requests to reopen it (the process's SIGHUPs).
    public init(path: String, hangUps: HangUpCount = .process) throws {
        self.path = path
        self.hangUps = hangUps
        // Read before opening: a signal in between costs one more reopen, never a line in a moved file.
        let seen = hangUps.current
        state = Mutex(State(fd: try PrivateFile.open(path, flags: O_WRONLY | O_APPEND), seen: seen))
    }

    /// Appends one finished line (with its newline), into a reopened file when a SIGHUP came since the last line.
    /// Returns why a reopen failed, once per failed reopen: the line, and the ones after it until the next SIGHUP,
    /// then go to the file opened before (a log line is never lost for a rotation).
    func append(_ bytes: [UInt8]) -> (any Error)? {
        state.withLock { state in
            var failure: (any Error)?
            let requested = hangUps.current
            // A deleted copy is reopened whatever the signals say, tried again at every line while it fails (said
            // once): its lines reach nobody meanwhile.
            let deleted = requested == state.seen && DeletedFile.isDeleted(state.fd)
            if requested != state.seen || deleted {
                state.seen = requested
                do {
                    let reopened = try PrivateFile.open(path, flags: O_WRONLY | O_APPEND)
                    close(state.fd)
                    state.fd = reopened
                    state.deletedReopenFailed = false
                } catch {
                    if !(deleted && state.deletedReopenFailed) { failure = error }
                    if deleted { state.deletedReopenFailed = true }
                }
            }
            let fd = state.fd
            let start = FileRewindPoint(fd, appends: true)
            bytes.withUnsafeBytes { buffer in
                do throws(SystemError) {
                    try FileDescriptorWriter.write(fd: fd, bytes: buffer)
                } catch {
                    start?.rewind(fd)  // no torn line for the next one to be glued to
                }
            }
            return failure
        }
    }

    deinit { state.withLock { close($0.fd) } }
}
