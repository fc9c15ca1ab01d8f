internal import BridgeSystem
internal import BridgeTLS

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// One connection to a Redis server (plain TCP or TLS) and its reply parser. Blocking: run it on a thread of its
/// own, never on the cooperative pool (`RedisClient` does).
///
/// A pipeline writes its commands ahead of their replies, at most `maxInFlight` unanswered at once, and reads the
/// replies in order. Any I/O failure, a timeout or a protocol violation marks the connection broken: the bytes on
/// the wire can no longer be matched to commands, so it is never used again. Not Sendable: one thread at a time.
final class RedisConnection {
    private let stream: any ByteStream
    private let reader = RedisReplyReader()
    private let settings: RedisSettings
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// Set after a failure that leaves unread replies or half-written commands on the wire.
    private(set) var isBroken = false

    private init(stream: any ByteStream, settings: RedisSettings) {
        self.stream = stream
        self.settings = settings
    }

    deinit { stream.shutdown() }

    /// Connects, runs the TLS handshake for `rediss://`, authenticates and selects the database, all before
    /// `settings.connectTimeout` passes.
    static func open(settings: RedisSettings, isCancelled: () -> Bool) throws(RedisError) -> RedisConnection {
        let url = settings.url
        let deadline = ContinuousClock.now + settings.connectTimeout
        let addresses: [SocketAddress]
        do {
            addresses = try AddressResolver.resolve(host: url.host, port: url.port)
        } catch {
            throw RedisError(kind: .retriable, message: "cannot resolve \(url.host): \(error)")
        }
        var failures: [String] = []
        var socket: Socket?
        for address in addresses where ContinuousClock.now < deadline {
            do {
                socket = try Socket.connect(to: address, deadline: deadline, isCancelled: isCancelled)
                break
            } catch {
                failures.append("\(address): \(error)")
            }
        }
        guard let socket else {
            let summary = failures.isEmpty ? "no time left" : failures.joined(separator: "; ")
            throw RedisError(kind: .retriable, message: "cannot connect to \(url): \(summary)")
        }
        try? socket.setNoDelay()
        let stream: any ByteStream
        if settings.usesTLS {
            ignoreSIGPIPE()  // OpenSSL writes with write(2), which raises SIGPIPE on a closed peer
            do {
                let context = try TLSContext.make(configuration: TLSConfiguration(caFile: settings.caFile))
                stream = try TLSStream.connect(
                    socket: socket,
                    context: context,
                    serverName: url.host,
                    deadline: deadline,
                    isCancelled: isCancelled
                )
            } catch let error as TLSError {
                let kind: RedisError.Kind =
                    error.kind == .configuration ? .configuration : error.isRetriable ? .retriable : .authentication
                throw RedisError(kind: kind, message: "TLS with \(url) failed: \(error.message)")
            } catch {
                throw RedisError(kind: .retriable, message: "TLS with \(url) failed: \(error)")
            }
        } else {
            stream = PlainStream(socket: socket)
        }
        let connection = RedisConnection(stream: stream, settings: settings)
        try connection.handshake(deadline: deadline, isCancelled: isCancelled)
        return connection
    }

    /// `AUTH` (when the URL has a password) and `SELECT` (when it names a database other than 0), pipelined.
    private func handshake(deadline: ContinuousClock.Instant, isCancelled: () -> Bool) throws(RedisError) {
        var commands = RedisCommands()
        if let password = settings.url.password {
            if let user = settings.url.user {
                commands.command("AUTH", user, password)
            } else {
                commands.command("AUTH", password)
            }
        }
        let database = settings.database ?? 0
        if database != 0 { commands.command("SELECT", String(database)) }
        commands.command("PING")
        let replies = try pipeline(commands, timeout: max(.milliseconds(1), deadline - .now), isCancelled: isCancelled)
        for reply in replies {
            switch reply {
            case .status, .bulk: continue
            case .error(let text): throw RedisError.fromServer(text, context: "connecting to \(settings.url)")
            default:
                isBroken = true
                throw RedisError(
                    kind: .protocolViolation,
                    message: "\(settings.url) answered the handshake with \(reply)"
                )
            }
        }
    }

    /// Sends `commands` pipelined and returns one reply per command, in order. Throws when the connection breaks
    /// or no reply comes within `timeout` of the previous one (the connection is broken then).
    func pipeline(
        _ commands: RedisCommands,
        timeout: Duration? = nil,
        isCancelled: () -> Bool = { false }
    ) throws(RedisError) -> [RedisReply] {
        precondition(commands.isComplete, "a Redis command lacks arguments")
        guard !isBroken else { throw RedisError(kind: .retriable, message: "the connection to \(settings.url) broke") }
        let timeout = timeout ?? settings.replyTimeout
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        var sent = 0
        var written = 0
        do throws(RedisError) {
            while replies.count < commands.count {
                if sent < commands.count && sent - replies.count < settings.maxInFlight {
                    let last = min(commands.count, replies.count + settings.maxInFlight) - 1
                    let end = commands.ends[last]
                    try write(commands.bytes, from: written, to: end, timeout: timeout)
                    written = end
                    sent = last + 1
                }
                try readReplies(into: &replies, upTo: sent, timeout: timeout, isCancelled: isCancelled)
            }
        } catch {
            isBroken = true
            throw error
        }
        return replies
    }

    private func write(_ bytes: [UInt8], from start: Int, to end: Int, timeout: Duration) throws(RedisError) {
        do {
            try bytes.withUnsafeBytes { raw in
                try stream.write(UnsafeRawBufferPointer(rebasing: raw[start..<end]), deadline: .now + timeout)
            }
        } catch {
            throw RedisError(kind: .retriable, message: "writing to \(settings.url) failed: \(error)")
        }
    }

    /// Reads until at least one more reply is complete (all that are ready are taken), at most `limit` in total.
    private func readReplies(
        into replies: inout [RedisReply],
        upTo limit: Int,
        timeout: Duration,
        isCancelled: () -> Bool
    ) throws(RedisError) {
        let before = replies.count
        while true {
            while replies.count < limit, let reply = try reader.next() { replies.append(reply) }
            if replies.count > before { return }
            let deadline = ContinuousClock.now + timeout
            var result = StreamReadResult.timedOut
            while true {
                if isCancelled() { throw RedisError(kind: .retriable, message: "cancelled while waiting for Redis") }
                let step = min(deadline, ContinuousClock.now + .milliseconds(250))
                do {
                    result = try buffer.withUnsafeMutableBytes { try stream.read(into: $0, deadline: step) }
                } catch {
                    throw RedisError(kind: .retriable, message: "reading from \(settings.url) failed: \(error)")
                }
                if case .timedOut = result, ContinuousClock.now < deadline { continue }
                break
            }
            switch result {
            case .read(let count):
                let fed = buffer.withUnsafeBytes { raw in
                    Result { () throws(RedisError) in try reader.feed(UnsafeRawBufferPointer(rebasing: raw[..<count])) }
                }
                try fed.get()
            case .timedOut:
                throw RedisError(kind: .retriable, message: "\(settings.url) sent no reply within \(timeout)")
            case .endOfStream:
                throw RedisError(kind: .retriable, message: "\(settings.url) closed the connection")
            }
        }
    }

    /// Ends the connection (TLS close_notify, best effort, then the socket).
    func close() {
        isBroken = true
        stream.shutdown()
    }
}
