package import BridgeSystem
package import BridgeWebSocket
package import BridgeEvents

/// Keeps one realtime connection up for as long as the bridge runs: connect, run the connection on a thread of its
/// own, and reconnect forever with exponential backoff and full jitter (`directus.reconnect`).
///
/// Each attempt logs one line with the reason and the next delay. An upgrade refused with 401/403 or a refused socket
/// `auth` renews the token before the next attempt (re-login when the refresh token is refused). When Directus refuses
/// the credentials themselves (README.md "Credentials that stop working"), that is logged at error level, the bridge is
/// not ready, and they are tried again every `max_delay` before the next connection, until they work.
package struct RealtimeSupervisor: Sendable {
    /// What the supervisor needs to build connections.
    package struct Settings: Sendable {
        /// `ws(s)://host/path` (strict mode adds `access_token`).
        package var url: String
        /// How the socket authenticates.
        package var authMode: RealtimeSessionStateMachine.AuthMode
        /// Connection options (timeouts, TLS).
        package var options: WebSocketOptions
        /// Our ping interval.
        package var heartbeat: Duration
        /// The silence after which a connection is dead (`ServerHeartbeat.deadAfter`, docs/directus-protocol.md §14.4);
        /// twice `heartbeat` until the runtime knows the server's interval.
        package var deadAfter: Duration
        /// `directus.reconnect`.
        package var initialDelay: Duration
        /// `directus.reconnect.max_delay`.
        package var maxDelay: Duration
        /// `directus.reconnect.reset_after`.
        package var resetAfter: Duration

        /// Creates settings.
        package init(
            url: String, authMode: RealtimeSessionStateMachine.AuthMode, options: WebSocketOptions,
            heartbeat: Duration, initialDelay: Duration, maxDelay: Duration, resetAfter: Duration
        ) {
            self.url = url
            self.authMode = authMode
            self.options = options
            self.heartbeat = heartbeat
            self.deadAfter = heartbeat * 2
            self.initialDelay = initialDelay
            self.maxDelay = maxDelay
            self.resetAfter = resetAfter
        }
    }

    package let settings: Settings
    package let routes: [SubscriptionRoute]
    package let auth: AuthSession
    package let sinks: any EventIntake
    package let trigger: (any ActivityTrigger)?
    package let health: HealthState
    package let metrics: PipelineMetrics
    /// Every reason `reconnects` is called with, except `handshake_<status>` (one per HTTP status a server may
    /// answer the upgrade with): the metric's series exist at zero from the start.
    package static let reconnectReasons = [
        "heartbeat_timeout", "auth_failed", "auth_timeout", "closed", "error", "connect_failed",
    ]
    package let reconnects: @Sendable (String) -> Void
    package let logger: Logger

    /// Creates a supervisor; `reconnects(reason)` counts every reconnect by reason.
    package init(
        settings: Settings, routes: [SubscriptionRoute], auth: AuthSession, sinks: any EventIntake,
        trigger: (any ActivityTrigger)?, health: HealthState, metrics: PipelineMetrics,
        reconnects: @escaping @Sendable (String) -> Void, logger: Logger
    ) {
        self.settings = settings
        self.routes = routes
        self.auth = auth
        self.sinks = sinks
        self.trigger = trigger
        self.health = health
        self.metrics = metrics
        self.reconnects = reconnects
        self.logger = logger
    }

    /// Runs until `stop` is triggered and the connection is closed.
    package func run(stop: ShutdownSignal) async {
        var backoff = Backoff(
            initialDelay: settings.initialDelay, maxDelay: settings.maxDelay, resetAfter: settings.resetAfter)
        var credentialsRefused = false
        while !stop.isTriggered {
            let token = await auth.accessToken()
            if credentialsRefused {
                // Connecting with credentials Directus refuses cannot work; a connection that did would not say
                // whether they are accepted again (an old access token may outlive a changed password).
                credentialsRefused = await renew(stale: token) == .refused
                if credentialsRefused {
                    await stop.sleep(for: settings.maxDelay)  // a retry delay: a real timer
                    continue
                }
            }
            let started = ContinuousClock.now
            logger.info("connecting", metadata: [LogKey.url: ShownURL.of(settings.url)])
            let outcome = await attempt(token: token, stop: stop)
            if stop.isTriggered || outcome == .shutdown { return }
            backoff.connectionEnded(after: .now - started)
            var delay = backoff.nextDelay()
            let reason: String
            switch outcome {
            case .ended(let end):
                reason = Self.describe(end)
                reconnects(end.label)
                if case .authenticationFailed = end { credentialsRefused = await renew(stale: token) == .refused }
            case .connectFailed(let error):
                reason = error.description
                reconnects(error.kind == .handshakeRejected ? "handshake_\(error.status ?? 0)" : "connect_failed")
                if error.kind == .handshakeRejected, error.status == 401 || error.status == 403 {
                    credentialsRefused = await renew(stale: token) == .refused
                }
            case .shutdown:
                return
            }
            if credentialsRefused { delay = max(delay, settings.maxDelay) }
            logger.warning(
                "reconnecting", metadata: [LogKey.reason: reason, LogKey.delay: delay])
            await stop.sleep(for: delay)  // the backoff's reconnect delay: a real timer
        }
    }

    private enum Outcome: Equatable {
        case ended(RealtimeConnectionDriver.End)
        case connectFailed(WebSocketError)
        case shutdown

        package static func == (lhs: Outcome, rhs: Outcome) -> Bool {
            switch (lhs, rhs) {
            case (.ended(let a), .ended(let b)): a == b
            case (.shutdown, .shutdown): true
            default: false
            }
        }
    }

    private func attempt(token: String?, stop: ShutdownSignal) async -> Outcome {
        let connection: WebSocketConnection
        do {
            var text = settings.url
            if settings.authMode == .strict, let token {
                text += (text.contains("?") ? "&" : "?") + "access_token=" + URLQuery.escape(token)
            }
            connection = try await WebSocketConnection.connect(
                to: try WebSocketURL(text), options: settings.options, logger: logger)
        } catch let error as WebSocketError {
            return .connectFailed(error)
        } catch {
            if stop.isTriggered { return .shutdown }
            return .connectFailed(WebSocketError(.connectFailed, "\(error)"))
        }
        let (routes, sinks, tokenBox, trigger, health, metrics, logger, settings) = (
            self.routes, self.sinks, auth.tokenBox, self.trigger, self.health, self.metrics, self.logger,
            self.settings
        )
        let end: RealtimeConnectionDriver.End
        do {
            end = try await BlockingExecutor.shared.perform {
                RealtimeConnectionDriver(
                    connection: connection, routes: routes, authMode: settings.authMode,
                    heartbeat: settings.heartbeat, deadAfter: settings.deadAfter, resubscribeInterval: settings.maxDelay,
                    sinks: sinks, tokenBox: tokenBox, stop: stop, trigger: trigger,
                    health: health, metrics: metrics, logger: logger
                ).run()
            }
        } catch {
            end = .failed("\(error)")
        }
        return end == .shutdown ? .shutdown : .ended(end)
    }

    private enum Renewal { case renewed, refused, failed }

    /// Renews the token after the server refused it (a static token: asks whether it is still accepted).
    private func renew(stale: String?) async -> Renewal {
        do {
            try await auth.renew(replacing: stale)
            if !health.snapshot.authenticated { logger.info("credentials accepted again") }
            health.update { $0.authenticated = true }
            return .renewed
        } catch where error.isCredentialsRejected {
            health.update { $0.authenticated = false }
            logger.error(
                "Directus no longer accepts the credentials",
                metadata: [LogKey.error: error.description, LogKey.delay: settings.maxDelay])
            return .refused
        } catch {
            logger.warning("could not renew the token", metadata: [LogKey.error: error.description])
            return .failed
        }
    }

    package static func describe(_ end: RealtimeConnectionDriver.End) -> String {
        switch end {
        case .shutdown: "shutdown"
        case .heartbeatTimeout:
            "no traffic for twice the heartbeat (the bridge's, or the server's when it pings more often)"
        case .authenticationFailed(let message): "socket authentication refused (\(message))"
        case .authenticationTimedOut: "token expired and re-authentication timed out"
        case .closed(let code, let reason): "connection closed (\(code)\(reason.isEmpty ? "" : ": " + reason))"
        case .failed(let message): message
        }
    }
}
