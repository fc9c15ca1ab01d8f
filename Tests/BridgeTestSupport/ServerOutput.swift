import BridgeSystem
import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The stdout and stderr pipes of a helper server (`PythonServer`), read by a thread of their own that polls both and
/// a wake-up, with no libdispatch in between.
///
/// `FileHandle.readabilityHandler` read them before: a libdispatch read source per pipe, the only dispatch sources of
/// the test process, and the one place libdispatch was seen unregistering a registration from two threads at once
/// (the hang-up on its manager thread, the cancel on a worker), just when a server stopped; the test process crashed
/// three times in `_dispatch_event_loop_drain` at such a moment (docs/RELIABILITY.md, "Open: the unit test process
/// crashed once in libdispatch").
///
/// The pipes are made close-on-exec: no other child of the test process (another test's, started at the same time)
/// keeps a copy of their write ends, so the server's exit is their end of file.
final class ServerOutput: @unchecked Sendable {
    // @unchecked: the descriptors are set once in init and closed once, under `lock` (`closeReadEnds`,
    // `closeChildEnds`), never while the reader thread runs (it is joined first, and it holds this object, so
    // deinit comes after it); `captured` and `reader` are guarded by `lock`.
    /// The read ends of stdout and stderr (non-blocking); -1 once closed.
    private var readEnds: [Int32]
    /// The write ends the child gets as its stdout and stderr; -1 once closed (after the child started).
    private var writeEnds: [Int32]
    private let wakeup: PollWakeup
    private let lock = NSLock()
    private var captured = Data()
    private var reader: DetachedThread.Joinable?

    /// Two close-on-exec pipes; throws when the process is out of descriptors.
    init() throws(SystemError) {
        var ends: [Int32] = []
        do throws(SystemError) {
            for _ in 0..<2 {
                var pair: [Int32] = [-1, -1]
                guard pipe(&pair) == 0 else { throw SystemError(operation: "pipe", errno: errno) }
                // Right after `pipe` (Glibc's module has no `pipe2`): Foundation's spawn closes every other
                // descriptor in its child anyway, except one made while it lists them.
                for end in pair { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                ends += pair
            }
            wakeup = try PollWakeup()
        } catch {
            for end in ends { close(end) }
            throw error
        }
        readEnds = [ends[0], ends[2]]
        writeEnds = [ends[1], ends[3]]
        // The reader drains what is there and goes back to poll: a read must never wait.
        for end in readEnds { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
    }

    deinit {
        closeReadEnds()
        closeChildEnds()
    }

    /// The child's stdout and stderr, for `Process.standardOutput` and `standardError`: handles that do not own the
    /// descriptors (this object does; `Process` keeps its handles as long as it lives, and a handle closing a number
    /// on release could close one reused by then).
    var childEnds: (stdout: FileHandle, stderr: FileHandle) {
        (
            FileHandle(fileDescriptor: writeEnds[0], closeOnDealloc: false),
            FileHandle(fileDescriptor: writeEnds[1], closeOnDealloc: false)
        )
    }

    /// Closes this process's copies of the write ends, once the child has its own (after `Process.run`).
    func closeChildEnds() {
        lock.withLock {
            for index in writeEnds.indices where writeEnds[index] >= 0 {
                close(writeEnds[index])
                writeEnds[index] = -1
            }
        }
    }

    /// Reads stdout up to a newline (the server's `READY` line), at most until `timeout` passes; what was read, or
    /// nil when nothing came. One byte at a time, so nothing after the line is taken from the reader.
    func readLine(timeout: TimeInterval) -> String? {
        var buffer = Data()
        let fd = readEnds[0]
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&pollFD, 1, 100) <= 0 { continue }
            var byte: UInt8 = 0
            let count = read(fd, &byte, 1)
            if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            if count <= 0 { return buffer.isEmpty ? nil : String(decoding: buffer, as: UTF8.self) }
            if byte == 0x0A { return String(decoding: buffer, as: UTF8.self) }
            buffer.append(byte)
        }
        return nil
    }

    /// Starts the thread that keeps everything the server writes from now on; it runs until both pipes end or
    /// `finish` stops it.
    func startReading() throws(SystemError) {
        let reader = try DetachedThread.startJoinable { self.readUntilEndOrWakeup() }
        lock.withLock { self.reader = reader }
    }

    /// What the server wrote after its `READY` line, stdout and stderr interleaved as they came.
    var text: String { lock.withLock { String(decoding: captured, as: UTF8.self) } }

    /// What stderr holds now, without waiting (a server that did not start: why).
    func availableErrorText() -> String {
        var data = Data()
        _ = drain(readEnds[1]) { data.append(contentsOf: $0) }
        return String(decoding: data, as: UTF8.self)
    }

    /// Stops the reader after it took what the pipes hold (the server has exited: all it wrote), waits for it, and
    /// closes the read ends. Again: nothing.
    func finish() {
        let reader = lock.withLock { () -> DetachedThread.Joinable? in
            defer { self.reader = nil }
            return self.reader
        }
        if let reader {
            wakeup.ring()
            reader.join()
        }
        closeReadEnds()
    }

    private func closeReadEnds() {
        lock.withLock {
            for index in readEnds.indices where readEnds[index] >= 0 {
                close(readEnds[index])
                readEnds[index] = -1
            }
        }
    }

    /// The reader thread: polls both pipes and the wake-up; after a ring, one last drain of each pipe.
    private func readUntilEndOrWakeup() {
        let append: (UnsafeRawBufferPointer) -> Void = { bytes in self.lock.withLock { self.captured.append(contentsOf: bytes) } }
        var open = readEnds  // -1 once a pipe ended: poll skips negative descriptors
        while open.contains(where: { $0 >= 0 }) {
            var fds = [pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0)]
            fds += open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                return
            }
            let stopping = fds[0].revents != 0
            for index in open.indices where open[index] >= 0 && (fds[index + 1].revents != 0 || stopping) {
                if !drain(open[index], into: append) { open[index] = -1 }
            }
            if stopping { return }
        }
    }

    /// Reads `fd` until it would block; false at its end (or an error).
    private func drain(_ fd: Int32, into append: (UnsafeRawBufferPointer) -> Void) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.withUnsafeBytes { append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                continue
            }
            if count < 0 && errno == EINTR { continue }
            return count < 0 && errno == EAGAIN
        }
    }
}
