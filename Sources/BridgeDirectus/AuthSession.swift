public import BridgeSystem
public import BridgeEvents

/// Who the bridge is to Directus, and keeping that valid for days.
///
/// Static tokens never expire (docs/directus-protocol.md §8.2). Email/password logins get a JWT whose lifetime
/// `expires` is in milliseconds (§8.3, §13.19), planned with as 5 s to 366 days (`AuthTokens.plannedLifetime`): the
/// session refreshes it over REST before it runs out and publishes every new token to the socket through `TokenBox`, so
/// the socket re-authenticates in band (§2.5) instead of hitting TOKEN_EXPIRED.
/// Refresh tokens rotate (§8.4): the newest is kept. A rejected refresh token leads to a fresh login; a rejected
/// login means the credentials are no longer accepted.
public actor AuthSession {
    /// What the bridge authenticates with.
    public enum Credentials: Sendable, Equatable {
        /// A static token (`directus_users.token`).
        case staticToken(String)
        /// Email and password (+ OTP), logged in over REST.
        case login(email: String, password: String, otp: String?)
        /// Public access: no token.
        case anonymous
    }

    private let credentials: Credentials
    private let client: DirectusClient
    /// The published token for the socket reader.
    public nonisolated let tokenBox: TokenBox
    private var tokens: AuthTokens?
    private var obtainedAt = ContinuousClock.now
    private let logger: Logger
    private let redact: @Sendable (String, Redactor.Rotating) -> Void
    private let refreshes: Counter?
    /// The callers waiting for the renewal in flight, nil when none runs. The actor is reentrant: without this, two
    /// callers that found the same token stale (the socket's TOKEN_EXPIRED and the refresher's deadline at once) each
    /// sent the same refresh token; Directus rotates it at the first use and refused the second, which logged in again
    /// (with an `otp`, a code already used: refused, and the bridge lost its session).
    private var renewalWaiters: [CheckedContinuation<Result<String?, DirectusError>, Never>]?

    /// Creates a session. `redact` is told every token and refresh token so the log handler hides them; each
    /// replaces an older one of its kind there (`Redactor.rotate`), so the list does not grow with every refresh.
    public init(
        credentials: Credentials, client: DirectusClient, logger: Logger, refreshes: Counter? = nil,
        redact: @escaping @Sendable (String, Redactor.Rotating) -> Void = { _, _ in }
    ) {
        self.credentials = credentials
        self.client = client
        self.logger = logger
        self.redact = redact
        self.refreshes = refreshes
        self.tokenBox = TokenBox()
        if case .staticToken(let token) = credentials {
            tokens = AuthTokens(accessToken: token, refreshToken: nil, expiresIn: nil)
            tokenBox.publish(token)
        }
    }

    /// Logs in (email/password) or checks the static token with `GET /users/me`. Throws the server's refusal
    /// (`isCredentialsRejected`) or a transport error.
    public func start() async throws(DirectusError) {
        switch credentials {
        case .anonymous:
            return
        case .staticToken(let token):
            try await check(staticToken: token)
        case .login:
            try await login()
        }
    }

    /// The access token to use now (nil for public access).
    public func accessToken() -> String? { tokens?.accessToken }

    /// When the current token should be renewed (75 % of its lifetime), or nil when it never expires.
    public func renewalDeadline() -> ContinuousClock.Instant? {
        guard let lifetime = tokens?.expiresIn else { return nil }
        return obtainedAt + lifetime * 0.75
    }

    /// Gets a new access token, unless `stale` is no longer the current one (another caller renewed it already).
    /// Tries the refresh token first and logs in again when Directus refuses it. A static token cannot be renewed:
    /// Directus is asked whether it still accepts it, so a token that was removed or a suspended user throws
    /// `isCredentialsRejected` like a changed password does.
    /// Concurrent callers share one renewal: those that come while it runs wait for its outcome.
    @discardableResult
    public func renew(replacing stale: String?) async throws(DirectusError) -> String? {
        if let current = tokens?.accessToken, current != stale { return current }
        if renewalWaiters != nil {
            return try await withCheckedContinuation { renewalWaiters?.append($0) }.get()
        }
        renewalWaiters = []
        let outcome: Result<String?, DirectusError>
        do {
            outcome = .success(try await renewNow())
        } catch {
            outcome = .failure(error)
        }
        let waiting = renewalWaiters ?? []
        renewalWaiters = nil
        for waiter in waiting { waiter.resume(returning: outcome) }
        return try outcome.get()
    }

    private func renewNow() async throws(DirectusError) -> String? {
        switch credentials {
        case .anonymous:
            return nil
        case .staticToken(let token):
            try await check(staticToken: token)
            return token
        case .login:
            if let refreshToken = tokens?.refreshToken {
                do {
                    try adopt(try await client.refresh(refreshToken: refreshToken))
                    refreshes?.increment()
                    logger.info("token refreshed", metadata: tokenLifetime)
                    return tokens?.accessToken
                } catch where error.isCredentialsRejected {
                    logger.warning("refresh token refused, logging in again", metadata: [LogKey.error: error.message])
                }
            }
            try await login()
            return tokens?.accessToken
        }
    }

    /// Logs out at shutdown so the refresh token does not linger (best effort).
    public func logout() async {
        if case .login = credentials, let refreshToken = tokens?.refreshToken {
            await client.logout(refreshToken: refreshToken)
        }
    }

    /// `GET /users/me` with `token`: throws Directus's refusal (`isCredentialsRejected`) or a transport error.
    private func check(staticToken token: String) async throws(DirectusError) {
        _ = try await client.request("GET", "/users/me", query: [("fields", "id")], token: token)
    }

    private func login() async throws(DirectusError) {
        guard case .login(let email, let password, let otp) = credentials else { return }
        try adopt(try await client.login(email: email, password: password, otp: otp))
        logger.info("logged in", metadata: tokenLifetime.merging([LogKey.user: email]) { $1 })
    }

    private func adopt(_ new: AuthTokens) throws(DirectusError) {
        redact(new.accessToken, .accessToken)
        if let refreshToken = new.refreshToken { redact(refreshToken, .refreshToken) }
        var merged = new
        if merged.refreshToken == nil { merged.refreshToken = tokens?.refreshToken }
        tokens = merged
        obtainedAt = .now
        tokenBox.publish(new.accessToken)
    }

    /// The new token's lifetime as a duration, or that it never expires (one type per log key).
    private var tokenLifetime: LogMetadata {
        guard let lifetime = tokens?.expiresIn else { return ["directus.token.expires": false] }
        return [LogKey.tokenTTL: lifetime]
    }
}
