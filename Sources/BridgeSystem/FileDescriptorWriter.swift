#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Whole-buffer writes to a file descriptor, retrying short writes and `EINTR`.
public enum FileDescriptorWriter {
    /// Writes every byte of `bytes` to `fd` or throws with the errno of the failing `write(2)`.
    public static func write(fd: Int32, bytes: UnsafeRawBufferPointer) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                throw SystemError(operation: "write", errno: code)
            }
            offset += written
        }
    }

    /// Best-effort variant for log lines: a failed stderr write cannot be reported anywhere else.
    public static func writeAll(fd: Int32, bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            _ = try? write(fd: fd, bytes: buffer)
        }
    }
}
