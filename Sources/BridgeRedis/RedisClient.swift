internal import BridgeSystem

/// A Redis client for one server: pipelined commands and stream appends with a dedup window, the blocking work on
/// `BlockingExecutor`'s threads (never on the cooperative pool).
///
/// It connects lazily: the first call, and the first after the connection broke, opens a new one (and loads the
/// dedup script); a failure is thrown for the caller's backoff to decide when to try again. Confined to one task
/// (not Sendable); one call at a time.
package final class RedisClient {
    /// The settings it connects with.
    package let settings: RedisSettings
    private var connection: RedisConnection?
    private var scriptLoaded = false

    /// A client for `settings`; nothing is connected yet.
    package init(settings: RedisSettings) {
        self.settings = settings
    }

    /// Whether a connection is open and usable.
    package var isConnected: Bool { connection.map { !$0.isBroken } ?? false }

    /// Opens a connection unless one is open; throws what went wrong (retriable, authentication, configuration).
    package func connect() async throws(RedisError) {
        if let connection, !connection.isBroken { return }
        connection = nil
        scriptLoaded = false
        let settings = self.settings
        let opened = try await Self.blocking { isCancelled throws(RedisError) in
            BlockingHandOff(try RedisConnection.open(settings: settings, isCancelled: isCancelled))
        }
        connection = opened.value
    }

    /// Sends `commands` pipelined (at most `settings.maxInFlight` unanswered at once) and returns one reply per
    /// command, in order; error replies are returned, not thrown. Throws when the connection fails (it is
    /// reopened by the next call).
    package func pipeline(_ commands: RedisCommands) async throws(RedisError) -> [RedisReply] {
        try await connect()
        let connection = BlockingHandOff(self.connection!)
        return try await Self.blocking { isCancelled throws(RedisError) in
            try connection.value.pipeline(commands, isCancelled: isCancelled)
        }
    }

    /// Appends `entries` (pipelined, in order), each unless the dedup window knows its id; one outcome per entry.
    /// Throws when the connection fails: entries appended before the failure are known to the window, so sending
    /// the same entries again appends only the rest (within the window).
    package func append(_ entries: [RedisStreamEntry], settings stream: RedisStreamSettings) async throws(RedisError)
        -> [RedisStreamOutcome]
    {
        guard !entries.isEmpty else { return [] }
        var outcomes = [RedisStreamOutcome?](repeating: nil, count: entries.count)
        var pending = Array(entries.indices)
        // A script cache emptied (SCRIPT FLUSH) while the batch was on its way fails its remaining entries with
        // NOSCRIPT: load it again and send those once more. Twice in a row means something keeps flushing it.
        for _ in 0..<3 where !pending.isEmpty {
            try await connect()
            if stream.dedupSeconds > 0 && !scriptLoaded { try await loadScript() }
            var commands = RedisCommands(capacity: pending.count * 256)
            for index in pending { Self.encode(entries[index], settings: stream, into: &commands) }
            let replies = try await pipeline(commands)
            var missingScript: [Int] = []
            for (index, reply) in zip(pending, replies) {
                if case .error(let text) = reply, text.hasPrefix("NOSCRIPT") {
                    missingScript.append(index)
                    continue
                }
                outcomes[index] = try Self.outcome(of: reply, deduplicated: stream.dedupSeconds > 0)
            }
            if !missingScript.isEmpty { scriptLoaded = false }
            pending = missingScript
        }
        guard pending.isEmpty else {
            throw RedisError(kind: .retriable, message: "the dedup script keeps disappearing from \(settings.url)")
        }
        return outcomes.map { $0! }
    }

    /// `PING`: proves the server is reachable and the credentials work.
    package func ping() async throws(RedisError) {
        var commands = RedisCommands()
        commands.command("PING")
        let reply = try await pipeline(commands)[0]
        if case .error(let text) = reply { throw RedisError.fromServer(text, context: "PING") }
        guard reply == .status("PONG") else {
            throw RedisError(kind: .protocolViolation, message: "PING answered \(RedisEntryID.shown(reply))")
        }
    }

    /// Closes the connection, if one is open.
    package func close() {
        connection?.close()
        connection = nil
        scriptLoaded = false
    }

    // MARK: - Internals

    /// `SCRIPT LOAD` of the dedup script; the server must answer with the script's SHA-1.
    private func loadScript() async throws(RedisError) {
        var commands = RedisCommands()
        commands.command("SCRIPT", "LOAD", RedisDedupScript.source)
        let reply = try await pipeline(commands)[0]
        if case .error(let text) = reply { throw RedisError.fromServer(text, context: "loading the dedup script") }
        guard reply.text == RedisDedupScript.sha1 else {
            connection?.close()
            throw RedisError(
                kind: .protocolViolation,
                message: "SCRIPT LOAD answered \(RedisEntryID.shown(reply)), not the script's SHA-1"
            )
        }
        scriptLoaded = true
    }

    /// `EVALSHA <dedup script> 2 stream dedupkey window maxlen fields…`, or a plain `XADD` when the window is off.
    static func encode(_ entry: RedisStreamEntry, settings: RedisStreamSettings, into commands: inout RedisCommands) {
        let fieldArguments = entry.fields.count * 2
        if settings.dedupSeconds > 0 {
            commands.begin(arguments: 7 + fieldArguments)
            commands.argument("EVALSHA")
            commands.argument(RedisDedupScript.sha1)
            commands.argument("2")
            commands.argument(entry.stream)
            commands.argument(settings.dedupKeyPrefix + entry.stream + ":" + entry.dedupID)
            commands.argument(settings.dedupSeconds)
            commands.argument(max(0, settings.maxLength))
        } else if settings.maxLength > 0 {
            commands.begin(arguments: 6 + fieldArguments)
            commands.argument("XADD")
            commands.argument(entry.stream)
            commands.argument("MAXLEN")
            commands.argument("~")
            commands.argument(settings.maxLength)
            commands.argument("*")
        } else {
            commands.begin(arguments: 3 + fieldArguments)
            commands.argument("XADD")
            commands.argument(entry.stream)
            commands.argument("*")
        }
        for field in entry.fields {
            commands.argument(field.name)
            commands.argument(field.value)
        }
    }

    /// The outcome of one append's reply: an entry id (`XADD`), the script's pair, or an error.
    static func outcome(of reply: RedisReply, deduplicated: Bool) throws(RedisError) -> RedisStreamOutcome {
        if case .error(let text) = reply {
            let error = RedisError.fromServer(text, context: "appending to the stream")
            if error.kind == .rejected { return .rejected(error) }
            throw error
        }
        if deduplicated { return try RedisDedupScript.outcome(of: reply) }
        guard let id = reply.text, RedisEntryID.isValid(id) else {
            throw RedisError(kind: .protocolViolation, message: "XADD answered \(RedisEntryID.shown(reply))")
        }
        return .appended(id)
    }

    /// Runs `body` on a blocking-executor thread; `isCancelled` tells it when the calling task was cancelled.
    private static func blocking<T>(
        _ body: @escaping @Sendable (_ isCancelled: () -> Bool) throws(RedisError) -> T
    ) async throws(RedisError) -> T where T: Sendable {
        let cancelled = CancellationFlag()
        let result: Result<T, RedisError>
        do {
            result = try await withTaskCancellationHandler {
                try await BlockingExecutor.shared.perform { () -> Result<T, RedisError> in
                    do throws(RedisError) {
                        return .success(try body { cancelled.isSet })
                    } catch {
                        return .failure(error)
                    }
                }
            } onCancel: {
                cancelled.set()
            }
        } catch {
            throw RedisError(kind: .retriable, message: "no thread for the Redis connection: \(error)")
        }
        return try result.get()
    }
}
