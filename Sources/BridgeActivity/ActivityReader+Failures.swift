internal import BridgeSystem
internal import BridgeEvents
package import BridgeDirectus

/// How the activity reader deals with failed reads: it retries every one (Directus may come back), but never a
/// deterministic failure forever without saying so at error level.
extension ActivityReaderLoop {
    /// Failures in a row after which a retried read is logged at error level.
    package static let persistentFailures = 5

    /// Runs `body` until it succeeds or the bridge stops (nil); failures are logged and retried with backoff by the
    /// bridge's one retry loop (`retrying(until:backoff:_:failed:)`).
    ///
    /// A failure that retrying cannot fix (`DirectusError.isRetriable` false), and any failure that came
    /// `persistentFailures` times in a row, is logged at error level: the reader never retries a deterministic
    /// failure forever with warnings only. A closed queue (the bridge is stopping) ends the retries.
    package func retrying<T>(_ message: String, _ body: () async throws -> T) async -> T? {
        var failures = 0
        // A local copy: the loop's `backoff` must not stay in an inout access across the body's suspensions.
        var backoff = self.backoff
        defer { self.backoff = backoff }
        return await BridgeSystem.retrying(until: stop, backoff: &backoff, body) { error, delay in
            if error is QueueClosed { return nil }
            reader.metrics.readFailures.increment()
            failures += 1
            let deterministic = (error as? DirectusError).map { !$0.isRetriable } ?? false
            let metadata: LogMetadata = [
                LogKey.error: "\(error)", LogKey.delay: delay, "attempts": failures,
            ]
            if deterministic || failures >= Self.persistentFailures {
                let why = deterministic ? "retrying it as it is cannot help" : "it keeps failing"
                logger.error(message + " (" + why + ")", metadata: metadata)
            } else {
                logger.warning(message, metadata: metadata)
            }
            if !catchingUp { startCatchingUp(reason: "read failed") }
            return delay
        }
    }

    /// Logs that Directus refused to read a subscription's items (at most once a minute per subscription).
    package func reportRefusal(uid: String, error: DirectusError) {
        reader.metrics.refusedReads.increment()
        let now = ContinuousClock.now
        if let last = lastRefusalLog[uid], now - last < .seconds(60) { return }
        lastRefusalLog[uid] = now
        logger.error(
            "Directus refused to read the subscription's items; its changes are skipped until the bridge's user "
                + "may read the collection and the query's fields",
            metadata: [LogKey.subscriptionUID: uid, LogKey.error: error.description]
        )
    }
}
