#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Waits for a file that another process writes to reach a state (a log line, a number of lines): woken by the
/// kernel (inotify) each time the file is written, never by polling on a timer.
final class FileWatch {
    private let descriptor: Int32

    /// Watches `path` (which must exist) for writes.
    init(path: String) throws {
        descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { throw BenchmarkError(message: "inotify_init1: errno \(errno)") }
        guard inotify_add_watch(descriptor, path, UInt32(IN_MODIFY | IN_CLOSE_WRITE)) >= 0 else {
            let failure = errno
            close(descriptor)
            throw BenchmarkError(message: "inotify_add_watch \(path): errno \(failure)")
        }
    }

    deinit {
        close(descriptor)
    }

    /// Returns true as soon as `isDone` does (checked first, then after every write to the file), false when
    /// `timeout` passes first.
    func wait(timeout: Duration, until isDone: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var events = [UInt8](repeating: 0, count: 4096)
        while !isDone() {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(left.components.seconds * 1000 + 1, 60_000))
            guard poll(&entry, 1, milliseconds) >= 0 || errno == EINTR else { return isDone() }
            while read(descriptor, &events, events.count) > 0 {}  // the events only say "written": drain them
        }
        return true
    }
}
