package import BridgeSystem

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The outcome of a `ByteStream.read`.
package enum StreamReadResult: Sendable, Equatable {
    /// This many bytes were read (more than zero).
    case read(Int)
    /// Nothing arrived before the deadline.
    case timedOut
    /// The peer closed the stream.
    case endOfStream
}

/// A connected byte stream (plain TCP or TLS) that one reader and one writer can use at the same time.
///
/// This is the seam between the WebSocket connection and the transport: tests can substitute scripted
/// streams. Timeouts are deadlines so that a caller can bound a whole operation (handshake, close).
package protocol ByteStream: AnyObject, Sendable {
    /// Reads at least one byte into `buffer` (up to its size), waiting until `deadline`.
    /// Throws `SystemError` or `TLSError` when the connection fails.
    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: ContinuousClock.Instant) throws
        -> StreamReadResult
    /// Writes all of `bytes`. Throws `SystemError` with `ETIMEDOUT` when `deadline` passes first.
    /// Callers serialise writers themselves (a frame must not interleave with another).
    func write(_ bytes: UnsafeRawBufferPointer, deadline: ContinuousClock.Instant) throws
    /// Ends the session (TLS close_notify, best effort) and shuts the TCP connection down in both directions,
    /// which wakes a reader blocked in `read`. Safe to call more than once and from any thread.
    func shutdown()
    /// The server's address.
    var remoteAddress: SocketAddress { get }
}

/// Plain TCP: a thin layer over a non-blocking `Socket`.
package final class PlainStream: ByteStream {
    private let socket: Socket

    /// Wraps a connected socket.
    package init(socket: Socket) {
        self.socket = socket
    }

    /// The server's address.
    package var remoteAddress: SocketAddress { socket.remoteAddress }

    /// Reads what is available, waiting with `poll` until `deadline`.
    package func read(into buffer: UnsafeMutableRawBufferPointer, deadline: ContinuousClock.Instant) throws
        -> StreamReadResult
    {
        while true {
            switch try socket.receive(into: buffer) {
            case .transferred(let count): return .read(count)
            case .endOfStream: return .endOfStream
            case .wouldBlock:
                if try !socket.wait(for: .readable, until: deadline) { return .timedOut }
            }
        }
    }

    /// Writes everything, waiting for buffer space until `deadline`.
    package func write(_ bytes: UnsafeRawBufferPointer, deadline: ContinuousClock.Instant) throws {
        var offset = 0
        while offset < bytes.count {
            switch try socket.send(UnsafeRawBufferPointer(rebasing: bytes[offset...])) {
            case .transferred(let count): offset += count
            case .endOfStream, .wouldBlock:
                if try !socket.wait(for: .writable, until: deadline) {
                    throw SystemError(operation: "send", errno: ETIMEDOUT)
                }
            }
        }
    }

    /// Shuts the TCP connection down.
    package func shutdown() {
        socket.shutdown()
    }
}
