public import BridgeSystem
import Synchronization

/// A REST client on libcurl: one blocking transfer per call, run on `BlockingExecutor.shared`.
///
/// Handles are pooled (up to `poolSize` idle pairs) so keep-alive connections, DNS and TLS sessions are reused
/// between calls. TLS is verified against the system store plus `options.caFile`; HTTP/2 is used when a TLS
/// server offers it. Cancelling the calling task aborts the transfer at once.
public final class HTTPClient: HTTPTransport, Sendable {
    /// The options every request uses.
    public let options: HTTPClientOptions
    private let pool: TransferPool
    private let logger: Logger

    /// Creates a client. `poolSize` bounds the idle handles kept for reuse (concurrent calls beyond it get
    /// fresh handles that are freed afterwards).
    public init(options: HTTPClientOptions = HTTPClientOptions(), poolSize: Int = 4, logger: Logger = .silent) {
        self.options = options
        self.pool = TransferPool(capacity: poolSize)
        self.logger = logger
    }

    /// Sends `request` and returns the final response (redirects are not followed).
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let cancellation = CancellationFlag()
        do {
            return try await withTaskCancellationHandler {
                try await BlockingExecutor.shared.perform { [pool, options] in
                    try pool.run(request, options: options, cancellation: cancellation)
                }
            } onCancel: {
                cancellation.cancel()
            }
        } catch let error as HTTPClientError {
            logger.debug("http request failed", metadata: [LogKey.url: error.url, LogKey.error: error.kind.rawValue])
            throw error
        }
    }
}

/// Idle `CurlTransfer`s for reuse, shared by the threads of the blocking pool.
///
/// `@unchecked Sendable`: `idle` is only touched under `lock`, and a `CurlTransfer` taken out is used by one
/// thread at a time (libcurl allows an easy or multi handle on any thread, one thread at a time).
final class TransferPool: @unchecked Sendable {
    private let lock = Mutex<Void>(())
    private var idle: [CurlTransfer] = []
    private let capacity: Int

    /// Creates an empty pool keeping at most `capacity` idle transfers.
    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// Runs `request` on a pooled transfer (or a new one) and returns the transfer to the pool.
    func run(
        _ request: HTTPRequest,
        options: HTTPClientOptions,
        cancellation: CancellationFlag
    ) throws(HTTPClientError) -> HTTPResponse {
        if cancellation.isCancelled {
            throw HTTPClientError(kind: .cancelled, message: "request cancelled", url: request.url)
        }
        let transfer = try take()
        defer { giveBack(transfer) }
        return try transfer.perform(request, options: options, cancellation: cancellation)
    }

    private func take() throws(HTTPClientError) -> CurlTransfer {
        let reused: CurlTransfer? = lock.withLock { _ in idle.popLast() }
        if let reused { return reused }
        return try CurlTransfer()
    }

    private func giveBack(_ transfer: CurlTransfer) {
        lock.withLock { _ in
            if idle.count < capacity { idle.append(transfer) }
        }
    }
}
