public import BridgeSystem
public import BridgeEvents

/// Keeps the access token fresh: renews it at 75 % of its lifetime and whenever the socket reports TOKEN_EXPIRED or a
/// REST call finds the credentials refused (`TokenBox.requestRenewal`). A rejected renewal (credentials revoked,
/// password changed, a static token removed) is logged at error level, marks the bridge not ready, and is retried every
/// `retryDelay` until it succeeds — the process does not exit (README.md "Credentials that stop working").
public struct TokenRefresher: Sendable {
    package let auth: AuthSession
    package let health: HealthState
    package let retryDelay: Duration
    package let logger: Logger

    /// Creates a refresher; `retryDelay` is `directus.reconnect.max_delay`.
    public init(auth: AuthSession, health: HealthState, retryDelay: Duration, logger: Logger) {
        self.auth = auth
        self.health = health
        self.retryDelay = retryDelay
        self.logger = logger
    }

    /// Runs until `stop` is triggered.
    public func run(stop: ShutdownSignal) async {
        // A renewal that fails for another reason (Directus unreachable) is retried sooner: from 0.5 s up to
        // `retryDelay`, with the bridge's one backoff.
        var backoff = Backoff(initialDelay: min(.milliseconds(500), retryDelay), maxDelay: retryDelay)
        while await renewalDue(stop: stop) {
            var failed = false
            let renewed: Void? = await retrying(until: stop, backoff: &backoff) {
                try await auth.renew(replacing: await auth.accessToken())
            } failed: { error, delay in
                failed = true
                if let error = error as? DirectusError, error.isCredentialsRejected {
                    health.update { $0.authenticated = false }
                    logger.error(
                        "Directus no longer accepts the credentials; retrying",
                        metadata: [LogKey.error: error.description, LogKey.delay: retryDelay])
                    return retryDelay
                }
                logger.warning(
                    "token renewal failed; retrying", metadata: [LogKey.error: "\(error)", LogKey.delay: delay])
                return delay
            }
            guard renewed != nil else { return }
            if failed || !health.snapshot.authenticated { logger.info("credentials accepted again") }
            health.update { $0.authenticated = true }
        }
    }

    /// Waits until the token is due for renewal (75 % of its lifetime) or a renewal is requested; false when
    /// stopped first. A request wakes it at once (the socket's TOKEN_EXPIRED is answered well within Directus's
    /// auth timeout); the only timer is the scheduled renewal.
    private func renewalDue(stop: ShutdownSignal) async -> Bool {
        let deadline = await auth.renewalDeadline()
        while !stop.isTriggered && !Task.isCancelled {
            if auth.tokenBox.takeRenewalRequest() { return true }
            if let deadline, ContinuousClock.now >= deadline { return true }
            await auth.tokenBox.waitForRenewalRequest(until: deadline, stop: stop)
        }
        return false
    }
}
