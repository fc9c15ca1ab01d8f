internal import BridgeSystem
internal import CNats
import Synchronization

/// The connection's health as its callbacks report it.
package enum NATSConnectionState: String, Sendable, Equatable {
    /// Connected to a server.
    case connected
    /// Lost its server; libnats is reconnecting (to any server of the cluster), publishes wait.
    case reconnecting
    /// Closed for good (closed by its owner, or by libnats after repeated authentication failures).
    case closed
}

/// A snapshot of a connection's health, for logs, metrics and readiness.
package struct NATSConnectionStatus: Sendable {
    /// Connected, reconnecting or closed.
    package var state: NATSConnectionState
    /// The last error a server or libnats reported (an authentication violation, a permissions error, a lost
    /// connection); cleared when the connection comes back.
    package var lastError: NATSError?
    /// How many times the connection came back after losing its server.
    package var reconnects: Int
}

/// What libnats's connection callbacks reach through their closure pointer: the connection's health, the
/// publishers to wake when it changes, and objects that must live as long as libnats may call into them.
///
/// Lifetime: `NATSConnection.connect` passes it retained; the +1 is released after the connection is destroyed
/// (or at once when connecting failed, when libnats calls none of the callbacks).
final class NATSConnectionContext: Sendable {
    private struct State {
        var status = NATSConnectionStatus(state: .connected, lastError: nil, reconnects: 0)
        var listeners: [@Sendable (NATSConnectionState) -> Void] = []
        /// Callback closures of publishers on this connection: kept until the connection is gone, because libnats
        /// may still be inside one of their callbacks while a publisher is torn down.
        var keptAlive: [AnyObject & Sendable] = []
    }

    private let state = Mutex(State())
    /// Whether libnats has closed the connection; its condition wakes `waitUntilClosed`.
    private let closed = ConditionLock(false)
    let logger: Logger
    let redactor: Redactor

    init(logger: Logger, redactor: Redactor) {
        self.logger = logger
        self.redactor = redactor
    }

    /// The current health.
    var status: NATSConnectionStatus { state.withLock { $0.status } }

    /// Whether libnats has closed the connection.
    var isClosed: Bool { closed.withLock { $0 } }

    /// Blocks the calling thread (never a task's) until libnats reported the close, at most `timeout`; true if it
    /// did.
    func waitUntilClosed(timeout: Duration) -> Bool {
        closed.wait(until: .now + timeout) { $0 }
    }

    /// Calls `listener` (on libnats's callback thread; keep it short) on every state change.
    func addListener(_ listener: @escaping @Sendable (NATSConnectionState) -> Void) {
        state.withLock { $0.listeners.append(listener) }
    }

    /// Keeps `object` alive until the connection is destroyed.
    func keepAlive(_ object: AnyObject & Sendable) {
        state.withLock { $0.keptAlive.append(object) }
    }

    /// Records a state change and tells the listeners.
    func changed(to newState: NATSConnectionState, error: NATSError? = nil) {
        if newState == .closed {
            closed.withLock { $0 = true }
            closed.broadcast()
        }
        let listeners = state.withLock { state -> [@Sendable (NATSConnectionState) -> Void] in
            state.status.state = newState
            if newState == .connected {
                state.status.lastError = nil
                state.status.reconnects += 1
            }
            if let error { state.status.lastError = error }
            return state.listeners
        }
        logger.debug("NATS connection state", metadata: [NATSLogKey.state: newState.rawValue])
        for listener in listeners { listener(newState) }
    }

    /// Records an asynchronous error (an authorization violation, a permissions error, a slow consumer).
    func asyncError(_ error: NATSError) {
        state.withLock { $0.status.lastError = error }
        logger.debug("NATS asynchronous error", metadata: [LogKey.error: redactor.redact(error.description)])
    }
}

/// Log metadata keys of this layer.
enum NATSLogKey {
    static let state = "nats.state"
}

// libnats's connection callbacks, as free functions matching the C typedefs. They run on libnats's callback thread.

func natsDisconnected(_ connection: OpaquePointer?, _ closure: UnsafeMutableRawPointer?) {
    guard let closure else { return }
    let context = Unmanaged<NATSConnectionContext>.fromOpaque(closure).takeUnretainedValue()
    guard !context.isClosed else { return }
    context.changed(
        to: .reconnecting,
        error: NATSError(
            kind: .retriable,
            status: Int32(bitPattern: NATS_CONNECTION_DISCONNECTED.rawValue),
            message: "lost the connection to the NATS server; reconnecting"
        )
    )
}

func natsReconnected(_ connection: OpaquePointer?, _ closure: UnsafeMutableRawPointer?) {
    guard let closure else { return }
    Unmanaged<NATSConnectionContext>.fromOpaque(closure).takeUnretainedValue().changed(to: .connected)
}

func natsClosed(_ connection: OpaquePointer?, _ closure: UnsafeMutableRawPointer?) {
    guard let closure else { return }
    let context = Unmanaged<NATSConnectionContext>.fromOpaque(closure).takeUnretainedValue()
    var lastText: UnsafePointer<CChar>?
    let lastStatus = connection.map { natsConnection_GetLastError($0, &lastText) } ?? NATS_OK
    let error =
        lastStatus == NATS_OK
        ? nil
        : NATSError.from(
            status: lastStatus,
            text: PeerText.string(lastText, redacting: context.redactor),
            context: "connection closed"
        )
    context.changed(to: .closed, error: error)
}

func natsAsyncError(
    _ connection: OpaquePointer?,
    _ subscription: OpaquePointer?,
    _ status: natsStatus,
    _ closure: UnsafeMutableRawPointer?
) {
    guard let closure else { return }
    let context = Unmanaged<NATSConnectionContext>.fromOpaque(closure).takeUnretainedValue()
    var lastText: UnsafePointer<CChar>?
    if let connection { _ = natsConnection_GetLastError(connection, &lastText) }
    context.asyncError(NATSError.from(status: status, text: PeerText.string(lastText, redacting: context.redactor)))
}
