internal import BridgeSystem
public import BridgeEvents
internal import BridgeConfig

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Writes one event line per event to stdout (`path: "-"`) or appends to a file.
///
/// A batch goes out in one `write(2)` where possible. A line is written whole or not at all, and once: if a write to
/// a regular file fails part-way (disk full), the file is cut back to where the batch started and the error is
/// reported, so a retry never leaves a torn line — stdout redirected into a file (`run > events.ndjson`) included; a
/// pipe or device cannot take back what it took, so the retry writes only the rest of the batch
/// (`NDJSONUnfinishedBatch`; docs/RELIABILITY.md, "Careless or hostile operators"). `fsync` policy: `always` (after
/// every batch), `interval` (at least once a second, and at close), `never`. `reopen` (SIGHUP) reopens the path so
/// logrotate can move the file.
///
/// The bridge never writes through a file or directory another local user controls (docs/RELIABILITY.md, "Files
/// another user controls"): the path, its links and directories are checked (`OwnedPath.resolveFile`) and the file is
/// opened without following a link and checked on its descriptor (`PrivateFile.open`), at start and at every reopen.
/// A file deleted while open (`rm`, not a rotation) is noticed after each write: the batch goes again into a new file
/// at the path, instead of every later line into a file nobody can read until the next SIGHUP.
///
/// `makeDurable` does nothing: lines are written and flushed when `accept` returns, and fsynced too with
/// `fsync: always`; `interval` and `never` trade that for speed, by the user's choice.
public final class NDJSONSink: SinkConnector, @unchecked Sendable {
    // @unchecked: the descriptor and buffer are used only by the sink's runner, one call at a time
    // (`SinkConnector`).
    public let name: String
    private let path: String
    private let policy: FsyncPolicy
    private var fd: Int32
    private let isStdout: Bool
    /// Whether `fd` is a regular file, which a failed batch is cut off again (`FileRewindPoint`), or a stream.
    private var output: NDJSONOutputFile.Kind
    /// The batch a pipe or device took part of before its write failed: the retry writes the rest.
    private var unfinished: NDJSONUnfinishedBatch?
    private var buffer: [UInt8] = []
    private var dirty = false
    private var lastSync = ContinuousClock.now
    private let linesWritten: Counter?

    /// Opens `path` for appending; "-" and the other names of stdout (`/dev/stdout`: a link into /proc that leads to
    /// no path when stdout is a pipe) write to descriptor 1. A file another user controls is refused for good.
    public convenience init(path: String, fsync policy: FsyncPolicy, linesWritten: Counter? = nil)
        throws(SinkError)
    {
        if ConfiguredPath.isStandardOutput(path) {
            self.init(path: path, fd: 1, isStdout: true, fsync: policy, linesWritten: linesWritten)
            return
        }
        let fd: Int32
        do {
            fd = try Self.open(path)
        } catch {
            throw Self.failure(error, sink: "ndjson:\(path)")
        }
        self.init(path: path, fd: fd, isStdout: false, fsync: policy, linesWritten: linesWritten)
    }

    /// Writes to `descriptor` as to stdout (not closed by the sink; a reader gone is not retried): what `path: "-"`
    /// does with descriptor 1, for tests with a pipe or file of their own.
    package convenience init(standardOutput descriptor: Int32, fsync policy: FsyncPolicy) {
        self.init(path: "-", fd: descriptor, isStdout: true, fsync: policy, linesWritten: nil)
    }

    private init(path: String, fd: Int32, isStdout: Bool, fsync policy: FsyncPolicy, linesWritten: Counter?) {
        self.path = path
        self.policy = policy
        self.name = "ndjson:\(path)"
        self.isStdout = isStdout
        self.linesWritten = linesWritten
        self.fd = fd
        self.output = NDJSONOutputFile.kind(of: fd)
        buffer.reserveCapacity(1 << 16)
    }

    deinit {
        if !isStdout && fd >= 0 { Glibc.close(fd) }
    }

    public func accept(_ events: [EncodedEvent]) async throws(SinkError) {
        guard !events.isEmpty else { return }
        if fd < 0 {
            do {
                fd = try Self.open(path)
            } catch let error as UnsafePathError {
                // Another user took the path over since the start (a refused reopen): the sink waits until fixed.
                throw SinkError(sink: name, message: "\(error)", isRetriable: true)
            } catch {
                throw Self.failure(error, sink: name)
            }
            guard fd >= 0 else {
                throw SinkError(
                    sink: name, message: "no reader on the named pipe \(path) yet; waiting for one", isRetriable: true)
            }
            output = NDJSONOutputFile.kind(of: fd)
            if output != .stream { unfinished = nil }
        }
        var start: FileRewindPoint?
        if case .file(let appends) = output { start = FileRewindPoint(fd, appends: appends) }
        let fd = fd
        let first = events[0].identifier
        let unfinished = self.unfinished
        var written = 0
        let write = { (bytes: UnsafeRawBufferPointer) -> SystemError? in
            // A retry of the batch a pipe took part of goes on where it stopped; anything else starts at its start.
            written = unfinished?.resumeOffset(first: first, count: events.count, length: bytes.count) ?? 0
            do throws(SystemError) {
                try FileDescriptorWriter.write(fd: fd, bytes: bytes, written: &written)
                return nil
            } catch {
                return error
            }
        }
        var length = 0
        // The events are read in place: a copy of each event retained and released its id, key and body. A socket
        // read's lines are written as they lie in their one buffer; other events are gathered into `buffer`.
        let failure: SystemError?
        if let outcome = events.withUnsafeBufferPointer({ lines in
            EventBody.withLines(of: lines) { bytes in
                length = bytes.count
                return write(bytes)
            }
        }) {
            failure = outcome
        } else {
            buffer.removeAll(keepingCapacity: true)
            events.withUnsafeBufferPointer { events in
                for index in events.indices {
                    events[index].body.withUnsafeBufferPointer { buffer.append(contentsOf: $0) }
                    buffer.append(0x0A)
                }
            }
            length = buffer.count
            failure = buffer.withUnsafeBytes(write)
        }
        self.unfinished = nil
        if let error = failure {
            if let start {
                start.rewind(fd)  // no torn line left behind, nothing written twice by the retry
            } else if written > 0 {
                self.unfinished = NDJSONUnfinishedBatch(
                    first: first, count: events.count, length: length, written: written)
            }
            throw SinkError(
                sink: name, message: "write failed: \(error)",
                isRetriable: !(isStdout && (error.errno == EPIPE || error.errno == EBADF)))
        }
        if !isStdout && output != .stream && DeletedFile.isDeleted(fd) {
            // Deleted while open (not rotated: nothing is left at the path or under another name). These lines went
            // where nobody reads them, and so would every later one until a SIGHUP: write them again into a new file.
            Glibc.close(fd)
            self.fd = -1
            throw SinkError(
                sink: name, message: "\(path) was deleted while the sink wrote to it; writing into a new file there",
                isRetriable: true)
        }
        linesWritten?.increment(by: UInt64(events.count))
        dirty = true
        if policy == .always { try sync() }
    }

    public func tick(now: ContinuousClock.Instant) async throws(SinkError) {
        if policy == .interval, dirty, now - lastSync >= .seconds(1) { try sync() }
    }

    /// Reopens the path (SIGHUP). A failure keeps the file open so far, except when another user controls what the
    /// path now names: then the sink closes it too and refuses every batch (retried with backoff, logged, listed in
    /// `/readyz` after 30 s; activity mode keeps the events at the sink's cursor) until the operator removes what is
    /// in the way. Writing on into the old file would hand the lines to whatever logrotate does with it next
    /// (compress, delete), where they would be lost unseen.
    public func reopen() async throws(SinkError) {
        guard !isStdout else { return }
        try sync()
        let newFD: Int32
        do {
            newFD = try Self.open(path)
        } catch let error as UnsafePathError {
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
            throw SinkError(sink: name, message: "refusing to reopen: \(error)", isRetriable: true)
        } catch {
            throw Self.failure(error, sink: name)
        }
        guard newFD >= 0 else {
            throw SinkError(sink: name, message: "no reader on the named pipe \(path) yet", isRetriable: true)
        }
        if fd >= 0 { Glibc.close(fd) }
        fd = newFD
        output = NDJSONOutputFile.kind(of: newFD)
        if output != .stream { unfinished = nil }  // the rest of a batch a pipe took part of belongs to that pipe only
    }

    public func close() async throws(SinkError) {
        if policy != .never { try sync() }
        if !isStdout && fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    private func sync() throws(SinkError) {
        defer { lastSync = .now }
        guard dirty, fd >= 0 else { return }
        dirty = false
        // fsync on a pipe or terminal fails with EINVAL: nothing to force there.
        if fsync(fd) != 0 {
            let code = errno
            if code == EINVAL || code == EROFS { return }
            dirty = true
            throw SinkError(sink: name, message: "\(SystemError(operation: "fsync", errno: code))", isRetriable: true)
        }
    }

    /// Opens `path` for appending; a file the sink creates is 0600 (docs/RELIABILITY.md, "Files and transport"), an
    /// existing one keeps its mode. -1 for a named pipe no process reads yet: opening it would wait for a reader,
    /// before the bridge logged a word and beyond SIGTERM (docs/RELIABILITY.md, "Careless or hostile operators");
    /// `accept` tries again. Throws `UnsafePathError` for a path another user controls, `SystemError` otherwise.
    private static func open(_ path: String) throws -> Int32 {
        do {
            let target = try OwnedPath.resolveFile(path)
            let fd = try PrivateFile.open(
                target, flags: O_WRONLY | O_APPEND | O_NONBLOCK, kinds: [.regularFile, .namedPipe, .device])
            // Only the open must not wait: writes block as they did (a full pipe holds this sink's runner).
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            return fd
        } catch let error as SystemError where error.errno == ENXIO {
            return -1
        }
    }

    /// `open`'s error as the sink reports it: a path another user controls, or one that cannot be opened at all, is
    /// not retried.
    private static func failure(_ error: any Error, sink: String) -> SinkError {
        if let error = error as? UnsafePathError {
            return SinkError(sink: sink, message: "\(error)", isRetriable: error.isRetriable)
        }
        let code = (error as? SystemError)?.errno ?? 0
        let lasting = code == EACCES || code == EISDIR || code == ENOENT
        return SinkError(sink: sink, message: "\(error)", isRetriable: !lasting)
    }
}
