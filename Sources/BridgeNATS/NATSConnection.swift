package import BridgeSystem
internal import CNats

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A `natsConnection` pointer that may cross threads: libnats's connection calls are thread-safe; only
/// `natsConnection_Destroy` is not, and only the owning `NATSConnection` calls it, once, last.
struct NATSConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// A connection to a NATS server or cluster, owning one `natsConnection`.
///
/// Made by `connect`, which fails fast (no server reachable, credentials refused) so the caller's backoff decides
/// when to try again. Once connected, libnats reconnects forever, to any server of the cluster; `status` tells.
/// Confined to one task (not Sendable); JetStream publishers made from it keep it alive.
package final class NATSConnection {
    let handle: NATSConnectionHandle
    let context: NATSConnectionContext
    private var closed = false

    private init(handle: NATSConnectionHandle, context: NATSConnectionContext) {
        self.handle = handle
        self.context = context
    }

    /// Releases on `BlockingExecutor.shared`: the close waits up to two seconds for libnats's closed callback, and
    /// the last reference often goes on the cooperative pool. Every path of the bridge `close()`s a connection before
    /// dropping it, so a process that exits right after leaves only the destroy undone, not the close.
    deinit {
        let (handle, context) = (handle, context)
        BlockingExecutor.shared.submit { Self.release(handle: handle, context: context) }
    }

    /// Connects with `settings`; throws a typed error (authentication, retriable, configuration). Blocking work
    /// runs on the blocking executor.
    package static func connect(settings: NATSSettings, logger: Logger) async throws -> NATSConnection {
        let context = NATSConnectionContext(logger: logger, redactor: Redactor(secrets: settings.secretValues))
        // +1 for libnats's callbacks (the options' closure), released after the connection is destroyed, or below
        // when connecting failed (libnats then calls no callback).
        let retained = Unmanaged.passRetained(context)
        let result: Result<NATSConnectionHandle, NATSError> = try await BlockingExecutor.shared.perform {
            do throws(NATSError) {
                let options = try NATSOptions.make(settings, context: retained.toOpaque())
                var connection: OpaquePointer?
                let status = natsConnection_Connect(&connection, options.pointer)
                guard status == NATS_OK, let connection else {
                    let text = NATSError.lastErrorText(redacting: context.redactor) ?? ""
                    return .failure(NATSError.from(status: status, text: text, context: "connect"))
                }
                return .success(NATSConnectionHandle(pointer: connection))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let handle):
            return NATSConnection(handle: handle, context: context)
        case .failure(let error):
            retained.release()
            throw error
        }
    }

    /// The connection's health (connected, reconnecting, closed; the last error).
    package var status: NATSConnectionStatus { context.status }

    /// Closes the connection (pending publishes are not waited for: close the publishers first) and releases it,
    /// on the blocking executor.
    package func close() async {
        guard !closed else { return }
        closed = true
        let handle = self.handle
        _ = try? await BlockingExecutor.shared.perform { natsConnection_Close(handle.pointer) }
    }

    /// Closes and destroys the connection, then drops the callbacks' +1 once libnats has reported the close
    /// (its callback thread may still be about to run the closed callback otherwise; if it never comes within
    /// two seconds the context is kept rather than risk a late call into freed memory).
    private static func release(handle: NATSConnectionHandle, context: NATSConnectionContext) {
        natsConnection_Close(handle.pointer)
        let reported = context.waitUntilClosed(timeout: .seconds(2))
        natsConnection_Destroy(handle.pointer)
        if reported { Unmanaged.passUnretained(context).release() }
    }
}
