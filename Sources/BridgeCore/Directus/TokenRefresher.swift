public import BridgeSystem

/// Keeps the access token fresh: renews it at 75 % of its lifetime and whenever the socket reports TOKEN_EXPIRED
/// or a REST call finds the credentials refused (`TokenBox.requestRenewal`). A rejected renewal (credentials
/// revoked, password changed, a static token removed) is logged at error level, marks the bridge not ready, and
/// is retried every `retryDelay` until it succeeds — the process does not exit (contract.md "Credentials").
public struct TokenRefresher: Sendable {
    let auth: AuthSession
    let health: HealthState
    let retryDelay: Duration
    let logger: Logger

    /// Creates a refresher; `retryDelay` is `directus.reconnect.max_delay`.
    public init(auth: AuthSession, health: HealthState, retryDelay: Duration, logger: Logger) {
        self.auth = auth
        self.health = health
        self.retryDelay = retryDelay
        self.logger = logger
    }

    /// Runs until `stop` is triggered.
    public func run(stop: ShutdownSignal) async {
        var failures = 0
        while !stop.isTriggered {
            let deadline = await auth.renewalDeadline()
            // Poll at 50 ms: cheap, and the socket's TOKEN_EXPIRED is answered well within Directus's auth timeout.
            while !stop.isTriggered {
                if auth.tokenBox.takeRenewalRequest() { break }
                if let deadline, ContinuousClock.now >= deadline { break }
                if failures > 0 { break }  // after the failure's delay: a static token has no deadline to wait for
                await stop.sleep(for: .milliseconds(50))
            }
            if stop.isTriggered { return }
            do {
                try await auth.renew(replacing: await auth.accessToken())
                if failures > 0 || !health.snapshot.authenticated { logger.info("credentials accepted again") }
                failures = 0
                health.update { $0.authenticated = true }
            } catch where error.isCredentialsRejected {
                failures += 1
                health.update { $0.authenticated = false }
                logger.error(
                    "Directus no longer accepts the credentials; retrying",
                    metadata: [LogKey.error: error.description, LogKey.delay: "\(retryDelay)"])
                await stop.sleep(for: retryDelay)
            } catch {
                failures += 1
                let delay = min(retryDelay, .milliseconds(250) * (1 << min(failures, 10)))
                logger.warning(
                    "token renewal failed; retrying", metadata: [LogKey.error: error.description, LogKey.delay: "\(delay)"])
                await stop.sleep(for: delay)
            }
        }
    }
}
