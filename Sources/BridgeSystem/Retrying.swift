/// Runs `operation` until it returns, waiting with `backoff` after each failure; nil once `stop` triggers.
///
/// The one retry loop of the bridge (REST reads at start-up, token renewal, the activity reader, reconnects, sink
/// retries). `failed` is told about each failure with the delay the backoff proposes, logs it, and returns the
/// delay to wait — usually the one proposed, a longer one when the error says so (`Retry-After`, credentials
/// refused), or nil to stop retrying (then `retrying` returns nil too). A success resets the backoff.
package func retrying<T>(
    until stop: ShutdownSignal,
    backoff: inout Backoff,
    _ operation: () async throws -> T,
    failed: (_ error: any Error, _ delay: Duration) async -> Duration?
) async -> T? {
    // `failed` never throws, so neither does the loop.
    (try? await retryingUnlessFatal(until: stop, backoff: &backoff, operation, failed: failed)) ?? nil
}

/// `retrying(until:backoff:_:failed:)` where `failed` may also throw, to end the retries with an error that
/// retrying cannot fix (a sink runner: a non-retriable sink error, a lease lost). The same loop: the other is this
/// one with a `failed` that never throws.
package func retryingUnlessFatal<T>(
    until stop: ShutdownSignal,
    backoff: inout Backoff,
    _ operation: () async throws -> T,
    failed: (_ error: any Error, _ delay: Duration) async throws -> Duration?
) async throws -> T? {
    while !stop.isTriggered && !Task.isCancelled {
        do {
            let value = try await operation()
            backoff.reset()
            return value
        } catch {
            if stop.isTriggered || Task.isCancelled { return nil }
            guard let delay = try await failed(error, backoff.nextDelay()) else { return nil }
            await stop.sleep(for: delay)  // the backoff's delay: a real timer
        }
    }
    return nil
}
