#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A failed system call, with the errno captured on the same statement as the call.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call that failed (`connect`, `write`, `fsync`, …).
    public var operation: String
    /// The errno value.
    public var errno: Int32

    /// Creates an error for `operation` failing with `errno`.
    public init(operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    /// `operation: strerror (errno N)`.
    public var description: String {
        let reason = strerror(errno).map { String(cString: $0) } ?? "unknown error"
        return "\(operation): \(reason) (errno \(errno))"
    }

    /// Transient conditions a caller may retry: interrupted, no buffer space, connection-level failures, and an
    /// address another process holds (it may release it: docs/RELIABILITY.md, "A port another user took first").
    public var isRetriable: Bool {
        switch errno {
        case EINTR, EAGAIN, ENOBUFS, ECONNREFUSED, ECONNRESET, ECONNABORTED, ETIMEDOUT, EHOSTUNREACH, ENETUNREACH,
            ENETDOWN, EPIPE, ENOTCONN, EADDRINUSE:
            true
        default:
            false
        }
    }
}
