package import BridgeSystem
internal import COpenSSL
import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A TLS client session over a connected non-blocking socket, usable by one reader and one writer at once.
///
/// OpenSSL's `SSL` object is not thread-safe, so every `SSL_*` call happens under `lock`, and the lock is never
/// held while waiting: a call that returns `WANT_READ`/`WANT_WRITE` releases the lock, waits in `poll`, and
/// retries. Renegotiation is off, so `SSL_write` never needs to read and a writer never consumes the reader's
/// records.
package final class TLSStream: ByteStream, @unchecked Sendable {
    // @unchecked: `ssl` is only used inside `lock.withLock` (OpenSSL allows an SSL object to be used from several
    // threads when calls are serialised); `socket` is Sendable; the flags live inside the mutex.
    private let ssl: OpaquePointer
    private let socket: Socket
    private let lock = Mutex(SessionFlags())

    private struct SessionFlags {
        /// A fatal error occurred: OpenSSL forbids SSL_shutdown afterwards.
        var failed = false
        var shutdownSent = false
    }

    private init(ssl: OpaquePointer, socket: Socket) {
        self.ssl = ssl
        self.socket = socket
    }

    deinit {
        SSL_free(ssl)  // Also frees the socket BIO (BIO_NOCLOSE: the Socket object closes the descriptor).
    }

    /// The server's address.
    package var remoteAddress: SocketAddress { socket.remoteAddress }

    /// Runs the client handshake for `serverName` (a DNS name or an IP literal) until `deadline`.
    ///
    /// Host names get SNI and name verification; IP literals are matched against IP SANs (no SNI: RFC 6066
    /// forbids literals there). Throws `TLSError`; a rejected certificate is `.certificateVerification` with the
    /// reason.
    package static func connect(
        socket: Socket,
        context: TLSContext,
        serverName: String,
        deadline: ContinuousClock.Instant,
        isCancelled: () -> Bool = { false }
    ) throws -> TLSStream {
        OpenSSLErrorQueue.clear()
        guard let ssl = SSL_new(context.handle) else {
            throw TLSError(kind: .configuration, message: "SSL_new failed", errorStack: OpenSSLErrorQueue.drain())
        }
        let stream = TLSStream(ssl: ssl, socket: socket)  // owns ssl from here on
        guard SSL_set_fd(ssl, socket.fd) == 1 else {
            throw TLSError(kind: .configuration, message: "SSL_set_fd failed", errorStack: OpenSSLErrorQueue.drain())
        }
        let isIPLiteral = SocketAddress(ipAddress: serverName, port: 0) != nil
        if !context.configuration.insecureSkipVerify {
            let parameters = SSL_get0_param(ssl)
            X509_VERIFY_PARAM_set_hostflags(parameters, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            let accepted =
                isIPLiteral
                ? X509_VERIFY_PARAM_set1_ip_asc(parameters, serverName)
                : X509_VERIFY_PARAM_set1_host(parameters, serverName, 0)
            guard accepted == 1 else {
                throw TLSError(
                    kind: .configuration,
                    message: "cannot verify against host name \(serverName)",
                    errorStack: OpenSSLErrorQueue.drain()
                )
            }
        }
        if !isIPLiteral {
            guard copenssl_set_tlsext_host_name(ssl, serverName) == 1 else {
                throw TLSError(
                    kind: .configuration,
                    message: "invalid server name \(serverName)",
                    errorStack: OpenSSLErrorQueue.drain()
                )
            }
        }
        try stream.handshake(deadline: deadline, isCancelled: isCancelled)
        return stream
    }

    private func handshake(deadline: ContinuousClock.Instant, isCancelled: () -> Bool) throws {
        while true {
            let outcome = call { SSL_connect(ssl) }
            if outcome.result == 1 { return }
            switch outcome.error {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                let events: PollEvents = outcome.error == SSL_ERROR_WANT_READ ? .readable : .writable
                while true {
                    if isCancelled() { throw SystemError(operation: "TLS handshake", errno: ECANCELED) }
                    let step = min(deadline, ContinuousClock.now + .milliseconds(250))
                    if try socket.wait(for: events, until: step) { break }
                    if ContinuousClock.now >= deadline {
                        throw SystemError(operation: "TLS handshake", errno: ETIMEDOUT)
                    }
                }
            default:
                markFailed()
                throw handshakeError(outcome)
            }
        }
    }

    private func handshakeError(_ outcome: CallOutcome) -> TLSError {
        let verifyCode = lock.withLock { _ in SSL_get_verify_result(ssl) }
        if verifyCode != X509_V_OK {
            let reason = OpenSSLErrorQueue.verifyReason(verifyCode)
            return TLSError(
                kind: .certificateVerification,
                message: "certificate verification failed: \(reason)",
                verifyCode: verifyCode,
                verifyReason: reason,
                errorStack: outcome.stack
            )
        }
        if outcome.error == SSL_ERROR_SYSCALL && outcome.stack.isEmpty {
            let detail =
                outcome.errno == 0
                ? "connection closed by the server"
                : SystemError(
                    operation: "TLS handshake",
                    errno: outcome.errno
                ).description
            return TLSError(kind: .handshake, message: "TLS handshake failed: \(detail)")
        }
        return TLSError(kind: .handshake, message: "TLS handshake failed", errorStack: outcome.stack)
    }

    // MARK: - ByteStream

    /// Reads decrypted bytes into `buffer`, filling it with as many buffered records as are ready.
    package func read(into buffer: UnsafeMutableRawBufferPointer, deadline: ContinuousClock.Instant) throws
        -> StreamReadResult
    {
        let capacity = Int32(clamping: buffer.count)
        while true {
            // Drain all records that are ready in one lock hold: fewer lock round trips on a busy stream.
            var total = 0
            var outcome = CallOutcome(result: 0, error: 0, errno: 0, stack: [])
            while total < Int(capacity) {
                outcome = call { SSL_read(ssl, buffer.baseAddress! + total, capacity - Int32(total)) }
                if outcome.result <= 0 { break }
                total += Int(outcome.result)
            }
            if total > 0 { return .read(total) }
            switch outcome.error {
            case SSL_ERROR_ZERO_RETURN:
                return .endOfStream
            case SSL_ERROR_WANT_READ:
                if try !socket.wait(for: .readable, until: deadline) { return .timedOut }
            case SSL_ERROR_WANT_WRITE:
                if try !socket.wait(for: .writable, until: deadline) { return .timedOut }
            case SSL_ERROR_SYSCALL where outcome.stack.isEmpty:
                markFailed()
                if outcome.errno == 0 { return .endOfStream }
                throw SystemError(operation: "SSL_read", errno: outcome.errno)
            default:
                markFailed()
                throw TLSError(kind: .session, message: "TLS read failed", errorStack: outcome.stack)
            }
        }
    }

    /// Encrypts and writes all of `bytes`, waiting for socket space until `deadline`.
    package func write(_ bytes: UnsafeRawBufferPointer, deadline: ContinuousClock.Instant) throws {
        var offset = 0
        while offset < bytes.count {
            let chunk = Int32(clamping: bytes.count - offset)
            let outcome = call { SSL_write(ssl, bytes.baseAddress! + offset, chunk) }
            if outcome.result > 0 {
                offset += Int(outcome.result)
                continue
            }
            switch outcome.error {
            case SSL_ERROR_WANT_WRITE, SSL_ERROR_WANT_READ:
                let events: PollEvents = outcome.error == SSL_ERROR_WANT_WRITE ? .writable : .readable
                if try !socket.wait(for: events, until: deadline) {
                    throw SystemError(operation: "SSL_write", errno: ETIMEDOUT)
                }
            case SSL_ERROR_SYSCALL where outcome.stack.isEmpty:
                markFailed()
                throw SystemError(operation: "SSL_write", errno: outcome.errno == 0 ? EPIPE : outcome.errno)
            default:
                markFailed()
                throw TLSError(kind: .session, message: "TLS write failed", errorStack: outcome.stack)
            }
        }
    }

    /// Sends close_notify once (best effort, without waiting) and shuts the socket down.
    package func shutdown() {
        lock.withLock { flags in
            guard !flags.failed, !flags.shutdownSent else { return }
            flags.shutdownSent = true
            OpenSSLErrorQueue.clear()
            _ = SSL_shutdown(ssl)
            OpenSSLErrorQueue.clear()
        }
        socket.shutdown()
    }

    // MARK: - Calls into OpenSSL

    /// A call's return value with everything needed to interpret it, captured on the calling thread.
    private struct CallOutcome {
        var result: Int32
        var error: Int32
        var errno: Int32
        var stack: [String]
    }

    /// Runs one `SSL_*` call under the lock and captures `SSL_get_error`, `errno` and the error queue before
    /// anything else can change them.
    private func call(_ body: () -> Int32) -> CallOutcome {
        lock.withLock { _ in
            OpenSSLErrorQueue.clear()
            let result = body()
            if result > 0 { return CallOutcome(result: result, error: SSL_ERROR_NONE, errno: 0, stack: []) }
            let code = Glibc.errno
            let error = SSL_get_error(ssl, result)
            return CallOutcome(result: result, error: error, errno: code, stack: OpenSSLErrorQueue.drain())
        }
    }

    private func markFailed() {
        lock.withLock { $0.failed = true }
    }
}
