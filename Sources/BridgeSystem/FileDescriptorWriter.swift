#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Whole-buffer writes to a file descriptor, retrying short writes and `EINTR`.
///
/// A descriptor in non-blocking mode is written as a blocking one: `EAGAIN` waits in `poll(2)` until it takes more.
/// The bridge never sets `O_NONBLOCK` on what it writes, but stdout and stderr are open file descriptions it shares
/// with whoever started it, and a parent may have set the flag on them (docs/RELIABILITY.md, "Careless or hostile
/// operators"): before, a full pipe then failed the write part-way, and the NDJSON sink's retry wrote the batch
/// again after a torn line.
public enum FileDescriptorWriter {
    /// Writes every byte of `bytes` to `fd` or throws with the errno of the failing `write(2)`.
    public static func write(fd: Int32, bytes: UnsafeRawBufferPointer) throws(SystemError) {
        var written = 0
        try write(fd: fd, bytes: bytes, written: &written)
    }

    /// Writes `bytes` from offset `written` on, advancing `written` past every byte `fd` took, or throws with the
    /// errno of the failing `write(2)`: `written` then says how much of `bytes` is out (a caller writing to a pipe,
    /// which cannot take anything back, resumes from there).
    public static func write(fd: Int32, bytes: UnsafeRawBufferPointer, written: inout Int) throws(SystemError) {
        while written < bytes.count {
            let count = Glibc.write(fd, bytes.baseAddress! + written, bytes.count - written)
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK {
                    try waitUntilWritable(fd)
                    continue
                }
                throw SystemError(operation: "write", errno: code)
            }
            written += count
        }
    }

    /// Best-effort variant for log lines: a failed stderr write cannot be reported anywhere else.
    public static func writeAll(fd: Int32, bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            _ = try? write(fd: fd, bytes: buffer)
        }
    }

    /// Waits without a deadline, as a blocking `write(2)` would: an error or hang-up counts as writable, so the next
    /// `write` reports it.
    private static func waitUntilWritable(_ fd: Int32) throws(SystemError) {
        while true {
            var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            if poll(&entry, 1, -1) > 0 { return }
            let code = errno
            if code == EINTR { continue }
            throw SystemError(operation: "poll", errno: code)
        }
    }
}
