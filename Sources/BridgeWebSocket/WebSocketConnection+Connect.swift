public import BridgeSystem
import BridgeTLS

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

extension WebSocketConnection {
    /// Opens a connection: resolves the host, tries each address (IPv6 and IPv4, in resolver order) until one
    /// accepts, sets TCP_NODELAY (and keep-alive), opens a tunnel through `options.proxy` when there is one, runs TLS
    /// for `wss://`, and performs the HTTP upgrade.
    ///
    /// All blocking work runs on `BlockingExecutor.shared`. `options.connectTimeout` bounds connect, TLS and
    /// upgrade together; cancelling the task ends the attempt within 250 ms. Throws `WebSocketError`
    /// (`.addressResolution`, `.connectFailed`, `.proxyRefused`, `.timeout`, `.tls`, `.handshakeRejected`,
    /// `.invalidHandshake`, `.invalidRequest`) or `CancellationError`.
    public static func connect(
        to url: WebSocketURL,
        options: WebSocketOptions = WebSocketOptions(),
        logger: Logger
    ) async throws -> WebSocketConnection {
        let cancelled = SetOnceFlag()
        return try await withTaskCancellationHandler {
            try await BlockingExecutor.shared.perform {
                try connectBlocking(to: url, options: options, logger: logger, isCancelled: { cancelled.isSet })
            }
        } onCancel: {
            cancelled.set()
        }
    }

    /// `connect(to:options:logger:)` for a caller that is already on a thread of its own. Blocks.
    public static func connectBlocking(
        to url: WebSocketURL,
        options: WebSocketOptions,
        logger: Logger,
        isCancelled: () -> Bool = { false }
    ) throws -> WebSocketConnection {
        let request = try HandshakeRequest(url: url, headers: options.headers)
        // With a proxy the TCP connection is to the proxy, and the tunnel it opens reaches the origin.
        let peer = options.proxy.map { Peer(host: $0.host, port: $0.port, name: "proxy \($0)") }
            ?? Peer(host: url.host, port: url.port, name: url.hostHeader)
        let addresses: [SocketAddress]
        do {
            addresses = try AddressResolver.resolve(host: peer.host, port: peer.port)
        } catch {
            throw WebSocketError(.addressResolution, "cannot resolve \(peer.name)", underlying: error)
        }
        let deadline = ContinuousClock.now + options.connectTimeout
        let socket = try connectFirst(
            addresses, peer: peer, deadline: deadline, logger: logger, isCancelled: isCancelled)
        do {
            try socket.setNoDelay()
            if let idle = options.tcpKeepAlive {
                let seconds = max(1, Int(idle.components.seconds))
                try socket.setKeepAlive(idleSeconds: seconds, intervalSeconds: max(1, seconds / 3), count: 3)
            }
        } catch {
            throw WebSocketError(.io, "cannot configure the socket to \(socket.remoteAddress)", underlying: error)
        }
        if let proxy = options.proxy {
            try openTunnel(PlainStream(socket: socket), through: proxy, to: url, deadline: deadline, isCancelled: isCancelled)
        }
        let stream: any ByteStream
        if url.isSecure {
            ignoreSIGPIPE()  // OpenSSL writes with write(2), which raises SIGPIPE on a closed peer
            do {
                let context = try TLSContext.make(configuration: options.tls)
                stream = try TLSStream.connect(
                    socket: socket,
                    context: context,
                    serverName: url.host,
                    deadline: deadline,
                    isCancelled: isCancelled
                )
            } catch let error as TLSError {
                throw WebSocketError(
                    .tls,
                    "TLS with \(url.host) (\(socket.remoteAddress)) failed: \(error.message)",
                    tlsError: error
                )
            } catch let error as SystemError where error.errno == ECANCELED {
                throw CancellationError()
            } catch {
                throw mapped(error, operation: "TLS handshake with \(socket.remoteAddress)")
            }
        } else {
            stream = PlainStream(socket: socket)
        }
        let leftover = try upgrade(stream, request: request, url: url, deadline: deadline, isCancelled: isCancelled)
        logger.debug(
            "websocket connected",
            metadata: [LogKey.webSocketURL: url.description, LogKey.webSocketAddress: "\(socket.remoteAddress)"]
        )
        return WebSocketConnection(url: url, options: options, stream: stream, leftover: leftover, logger: logger)
    }

    /// Where the TCP connection goes: the origin, or the proxy (`name` as messages show it).
    private struct Peer {
        var host: String
        var port: Int
        var name: String
    }

    /// Connects to the first address that accepts before `deadline`.
    private static func connectFirst(
        _ addresses: [SocketAddress],
        peer: Peer,
        deadline: ContinuousClock.Instant,
        logger: Logger,
        isCancelled: () -> Bool
    ) throws -> Socket {
        var failures: [String] = []
        var lastError: SystemError?
        for address in addresses {
            if ContinuousClock.now >= deadline { break }
            do {
                return try Socket.connect(to: address, deadline: deadline, isCancelled: isCancelled)
            } catch {
                if error.errno == ECANCELED { throw CancellationError() }
                logger.debug(
                    "websocket connect attempt failed",
                    metadata: [LogKey.webSocketAddress: "\(address)", LogKey.error: "\(error)"]
                )
                // The address only when it says more than the URL's host does (a name resolved to several).
                failures.append("\(address)" == peer.name ? "\(error)" : "\(address): \(error)")
                lastError = error
            }
        }
        let summary = failures.isEmpty ? "no time left" : failures.joined(separator: "; ")
        let kind: WebSocketError.Kind = ContinuousClock.now >= deadline ? .timeout : .connectFailed
        throw WebSocketError(kind, "cannot connect to \(peer.name): \(summary)", underlying: lastError)
    }

    /// Writes the upgrade request and reads the answer; returns bytes that followed the response head.
    private static func upgrade(
        _ stream: any ByteStream,
        request: HandshakeRequest,
        url: WebSocketURL,
        deadline: ContinuousClock.Instant,
        isCancelled: () -> Bool
    ) throws -> ArraySlice<UInt8> {
        do {
            try request.bytes.withUnsafeBytes { try stream.write($0, deadline: deadline) }
        } catch {
            throw mapped(error, operation: "sending the upgrade request")
        }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        // Reads more into `received`; false at end of stream.
        func readMore(until limit: ContinuousClock.Instant) throws -> Bool {
            switch try readStep(stream, into: &chunk, until: limit, isCancelled: isCancelled) {
            case .read(let count):
                received += chunk[..<count]
                return true
            case .timedOut:
                throw WebSocketError(.timeout, "no answer to the upgrade request from \(url.hostHeader) in time")
            case .endOfStream:
                return false
            }
        }
        do {
            while true {
                if let (response, headLength) = try HandshakeResponse.parse(received) {
                    if response.status != 101 {
                        // The body only adds detail: give it at most a second more, and stop at end of stream.
                        let bodyDeadline = min(deadline, ContinuousClock.now + .seconds(1))
                        var body = response.bodyPrefix(received[headLength...])
                        while !body.isComplete, (try? readMore(until: bodyDeadline)) == true {
                            body = response.bodyPrefix(received[headLength...])
                        }
                        // The server's words: bounded here, cleaned (after redaction) where they are shown.
                        let reason = PeerText.prefix(response.reasonPhrase, maximumLength: 200)
                        let phrase = reason.isEmpty ? "" : " \(reason)"
                        throw WebSocketError(
                            .handshakeRejected,
                            "upgrade rejected with HTTP \(response.status)\(phrase)",
                            status: response.status,
                            body: body.prefix
                        )
                    }
                    try response.validateUpgrade(for: request)
                    return received[headLength...]
                }
                if try !readMore(until: deadline) {
                    throw WebSocketError(
                        .invalidHandshake,
                        "\(url.hostHeader) closed the connection during the upgrade"
                    )
                }
            }
        } catch let error as WebSocketError {
            stream.shutdown()
            throw error
        } catch let error as CancellationError {
            stream.shutdown()
            throw error
        } catch {
            stream.shutdown()
            throw mapped(error, operation: "reading the upgrade response")
        }
    }

    /// Turns a transport error into a `WebSocketError`.
    private static func mapped(_ error: any Error, operation: String) -> WebSocketError {
        WebSocketError.transport(error, while: operation)
    }
}
