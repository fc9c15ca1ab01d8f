internal import BridgeSystem

/// An AMQP publisher for one broker: persistent, mandatory publishes counted as delivered on their publisher
/// confirm, the blocking work on `BlockingExecutor`'s threads (never on the cooperative pool).
///
/// It connects lazily: the first call, and the first after the connection broke, opens a new one; a failure is
/// thrown for the caller's backoff to decide when to try again. Confined to one task (not Sendable).
package final class AMQPClient {
    /// The settings it connects with.
    package let settings: AMQPSettings
    private var connection: AMQPConnection?
    /// When the connection last talked to the broker (the end of the last call that used it).
    private var lastUsed = ContinuousClock.now

    /// A client for `settings`; nothing is connected yet.
    package init(settings: AMQPSettings) {
        self.settings = settings
    }

    /// Whether a connection is open and usable.
    package var isConnected: Bool { connection.map { !$0.isBroken } ?? false }

    /// Opens a connection unless one is open; throws what went wrong (retriable, authentication, configuration).
    ///
    /// One idle for a heartbeat interval or longer is replaced first: librabbitmq sends heartbeats only from inside
    /// its calls, so an idle client sent none, and the broker closes a connection after two missed ones — a publish
    /// on it would fail on the dead socket. Opening a new one costs a handshake after each idle spell instead. One
    /// the broker blocked is kept however long: its publishes would be sent twice (`AMQPBlock`).
    package func connect() async throws(AMQPError) {
        if let connection, !connection.isBroken {
            let idle =
                settings.heartbeat > .zero && ContinuousClock.now - lastUsed >= settings.heartbeat
                && !connection.isHeld
            guard idle else { return }
            await close()
        }
        connection = nil
        let settings = self.settings
        let result: Result<BlockingHandOff<AMQPConnection>, AMQPError>
        do {
            result = try await BlockingExecutor.shared.perform {
                Result { () throws(AMQPError) in BlockingHandOff(try AMQPConnection.open(settings: settings)) }
            }
        } catch {
            throw AMQPError(kind: .retriable, message: "no thread to connect on: \(error)")
        }
        connection = try result.get().value
        lastUsed = .now
    }

    /// Checks that `exchange` exists (a passive declare), connecting first if needed: throws a configuration error
    /// (404) when it does not, an authentication error when the user may not see it. A failed check closes the
    /// connection (the broker closed its channel); the next call opens a new one.
    package func checkExchange(_ exchange: String) async throws(AMQPError) {
        try await connect()
        let connection = BlockingHandOff(self.connection!)
        defer { lastUsed = .now }
        let result: Result<Void, AMQPError>
        do {
            result = try await BlockingExecutor.shared.perform {
                Result { () throws(AMQPError) in try connection.value.checkExchange(exchange) }
            }
        } catch {
            throw AMQPError(kind: .retriable, message: "no thread to ask on: \(error)")
        }
        try result.get()
    }

    /// Publishes `messages` and waits for their confirms (`timeout` without any answer fails what is left); one
    /// outcome per message, in order. Throws only when no connection can be opened.
    package func publish(_ messages: [AMQPMessage], timeout: Duration) async throws(AMQPError) -> [AMQPOutcome] {
        guard !messages.isEmpty else { return [] }
        try await connect()
        let connection = BlockingHandOff(self.connection!)
        let cancelled = CancellationFlag()
        defer { lastUsed = .now }
        do {
            return try await withTaskCancellationHandler {
                try await BlockingExecutor.shared.perform {
                    connection.value.publish(messages, timeout: timeout) { cancelled.isSet }
                }
            } onCancel: {
                cancelled.set()
            }
        } catch {
            let failure = AMQPError(kind: .retriable, message: "no thread to publish on: \(error)")
            return messages.map { _ in .failed(failure) }
        }
    }

    /// Closes the connection, if one is open.
    package func close() async {
        guard let connection else { return }
        self.connection = nil
        let owned = BlockingHandOff(connection)
        _ = try? await BlockingExecutor.shared.perform { owned.value.close() }
    }
}
