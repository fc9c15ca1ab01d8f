#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The outcome of one non-blocking `recv`/`send`.
public enum SocketIOResult: Sendable, Equatable {
    /// This many bytes moved (always more than zero).
    case transferred(Int)
    /// The call would block; wait with `Poll` and try again.
    case wouldBlock
    /// The peer closed its sending side (reads only).
    case endOfStream
}

/// A connected TCP socket in non-blocking mode. The descriptor is owned by this object and closed in `deinit`.
///
/// Reading and writing from two threads at once is safe (the kernel serialises each direction). `shutdown`
/// may be called from any thread to wake a blocked reader; the descriptor itself is only closed in `deinit`, so
/// no thread can ever use a number that was closed and reused.
public final class Socket: Sendable {
    /// The file descriptor, valid for the life of this object.
    public let fd: Int32
    /// The address this socket is connected to.
    public let remoteAddress: SocketAddress

    /// Takes ownership of a connected, non-blocking descriptor.
    public init(adopting fd: Int32, remoteAddress: SocketAddress) {
        self.fd = fd
        self.remoteAddress = remoteAddress
    }

    deinit {
        close(fd)
    }

    /// Connects to `address` (from `localAddress` when given, e.g. another loopback address), waiting at most
    /// until `deadline`.
    ///
    /// The wait is sliced into steps of at most 250 ms so that `isCancelled` (checked between steps) can end it
    /// early. A timeout throws `ETIMEDOUT`, a cancellation `ECANCELED`.
    public static func connect(
        to address: SocketAddress,
        from localAddress: SocketAddress? = nil,
        deadline: ContinuousClock.Instant,
        isCancelled: () -> Bool = { false }
    ) throws(SystemError) -> Socket {
        let fd = Glibc.socket(
            address.family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
                | Int32(SOCK_CLOEXEC.rawValue),
            Int32(IPPROTO_TCP)
        )
        if fd < 0 { throw SystemError(operation: "socket", errno: errno) }
        let socket = Socket(adopting: fd, remoteAddress: address)  // closes fd on every error path below
        if let localAddress, localAddress.withSocketAddress({ Glibc.bind(fd, $0, $1) }) != 0 {
            throw SystemError(operation: "bind", errno: errno)
        }
        let result = address.withSocketAddress { Glibc.connect(fd, $0, $1) }
        if result == 0 { return socket }
        let code = errno
        guard code == EINPROGRESS else { throw SystemError(operation: "connect", errno: code) }
        while true {
            if isCancelled() { throw SystemError(operation: "connect", errno: ECANCELED) }
            let step = min(deadline, ContinuousClock.now + .milliseconds(250))
            if try Poll.wait(fd: fd, for: .writable, until: step) { break }
            if ContinuousClock.now >= deadline { throw SystemError(operation: "connect", errno: ETIMEDOUT) }
        }
        let pending = try socket.intOption(level: SOL_SOCKET, name: SO_ERROR)
        if pending != 0 { throw SystemError(operation: "connect", errno: pending) }
        return socket
    }

    /// Turns Nagle's algorithm off, so small frames leave at once.
    public func setNoDelay() throws(SystemError) {
        try setIntOption(level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
    }

    /// Turns TCP keep-alive on: the first probe after `idleSeconds` of silence, then `count` probes
    /// `intervalSeconds` apart before the kernel declares the connection dead.
    public func setKeepAlive(idleSeconds: Int, intervalSeconds: Int, count: Int) throws(SystemError) {
        try setIntOption(level: SOL_SOCKET, name: SO_KEEPALIVE, value: 1)
        try setIntOption(level: Int32(IPPROTO_TCP), name: TCP_KEEPIDLE, value: Int32(clamping: idleSeconds))
        try setIntOption(level: Int32(IPPROTO_TCP), name: TCP_KEEPINTVL, value: Int32(clamping: intervalSeconds))
        try setIntOption(level: Int32(IPPROTO_TCP), name: TCP_KEEPCNT, value: Int32(clamping: count))
    }

    /// Reads what is available into `buffer` without blocking.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> SocketIOResult {
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count > 0 { return .transferred(count) }
            if count == 0 { return buffer.isEmpty ? .transferred(0) : .endOfStream }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            throw SystemError(operation: "recv", errno: code)
        }
    }

    /// Writes as much of `bytes` as fits without blocking. `MSG_NOSIGNAL`: a closed peer is `EPIPE`, not SIGPIPE.
    public func send(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> SocketIOResult {
        while true {
            let count = Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return .transferred(count) }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            throw SystemError(operation: "send", errno: code)
        }
    }

    /// Waits until the socket is ready for `events` or `deadline` passes (`false` on timeout).
    public func wait(for events: PollEvents, until deadline: ContinuousClock.Instant) throws(SystemError) -> Bool {
        try Poll.wait(fd: fd, for: events, until: deadline)
    }

    /// Shuts down both directions: the peer sees end of stream and a thread blocked in `poll` wakes up.
    /// Safe to call more than once and from any thread; errors (already disconnected) are ignored.
    public func shutdown() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Shuts down the sending direction only (the peer reads end of stream; we can still read).
    public func shutdownWrite() {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    // MARK: - Options

    private func setIntOption(level: Int32, name: Int32, value: Int32) throws(SystemError) {
        var value = value
        if setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) != 0 {
            throw SystemError(operation: "setsockopt", errno: errno)
        }
    }

    private func intOption(level: Int32, name: Int32) throws(SystemError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, level, name, &value, &length) != 0 {
            throw SystemError(operation: "getsockopt", errno: errno)
        }
        return value
    }
}
