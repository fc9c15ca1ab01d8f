#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A TCP listening socket for loopback peers in tests and benchmarks. Owns its descriptor.
public final class ListeningSocket: Sendable {
    /// The listening descriptor.
    public let fd: Int32
    /// The bound address, with the port the kernel chose when asked for port 0.
    public let localAddress: SocketAddress

    /// Binds `address` (port 0 picks a free port) and listens.
    public init(binding address: SocketAddress, backlog: Int32 = 64) throws(SystemError) {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { throw SystemError(operation: "socket", errno: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if address.withSocketAddress({ bind(fd, $0, $1) }) != 0 {
            let code = errno
            close(fd)
            throw SystemError(operation: "bind", errno: code)
        }
        if listen(fd, backlog) != 0 {
            let code = errno
            close(fd)
            throw SystemError(operation: "listen", errno: code)
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        if named != 0 {
            let code = errno
            close(fd)
            throw SystemError(operation: "getsockname", errno: code)
        }
        self.fd = fd
        self.localAddress = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
        }
    }

    deinit {
        close(fd)
    }

    /// The port the socket is bound to.
    public var port: Int { localAddress.port }

    /// Waits until `deadline` for a connection; returns it as a non-blocking `Socket`, or `nil` on timeout.
    public func accept(until deadline: ContinuousClock.Instant) throws(SystemError) -> Socket? {
        guard try Poll.wait(fd: fd, for: .readable, until: deadline) else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let accepted = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.accept(fd, $0, &length)
            }
        }
        if accepted < 0 { throw SystemError(operation: "accept", errno: errno) }
        // accept4 is not imported without _GNU_SOURCE: set the flags with fcntl instead.
        _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
        _ = fcntl(accepted, F_SETFL, fcntl(accepted, F_GETFL) | O_NONBLOCK)
        let remote = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
        }
        return Socket(adopting: accepted, remoteAddress: remote)
    }

    /// Stops accepting: a thread waiting in `accept` wakes up.
    public func shutdown() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }
}
