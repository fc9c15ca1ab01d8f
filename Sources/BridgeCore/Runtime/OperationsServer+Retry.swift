package import BridgeHTTPServer
package import BridgeSystem

extension OperationsServer {
    /// The delays between attempts to take a port another process holds: from 1 s, doubling (with jitter) up to 30 s.
    static let retryBackoff = Backoff(initialDelay: .seconds(1), maxDelay: .seconds(30))

    /// After `start` found the port of `http.listen` held by another process: tries again with the bridge's backoff,
    /// an error line per attempt with the next delay, until it listens; then serves until this task is cancelled
    /// (the end of `run`). Returns without serving when `stop` triggers first.
    ///
    /// The bridge reads Directus and delivers meanwhile, only without `/metrics`, `/healthz` and `/readyz`: a local
    /// user who bound the port first keeps those away while they hold it, but cannot keep the service down, as exit
    /// 78 did (the unit never restarts it: docs/RELIABILITY.md, "A port another user took first").
    package static func keepListening(
        _ binding: Binding,
        after failure: HTTPServerError,
        stop: ShutdownSignal,
        logger: Logger
    ) async {
        var backoff = retryBackoff
        var pending: HTTPServerError? = failure  // `start`'s attempt, logged and waited out like every other
        let server = await retrying(until: stop, backoff: &backoff) { () throws -> HTTPServer in
            if let failed = pending {
                pending = nil
                throw failed
            }
            return try serve(binding, logger: logger)
        } failed: { error, delay in
            guard let error = error as? HTTPServerError, error.isRetriable else {
                logger.error(
                    "cannot listen on http.listen; /metrics, /healthz and /readyz stay off",
                    metadata: [LogKey.error: "\(error)"]
                )
                return nil
            }
            logger.error(
                "cannot listen on http.listen, retrying; /metrics, /healthz and /readyz are off meanwhile",
                metadata: [LogKey.error: error.description, LogKey.delay: delay]
            )
            return delay
        }
        guard let server else { return }
        await ShutdownSignal().wait()  // a signal nobody triggers: returns when this task is cancelled
        await server.close()
    }
}
