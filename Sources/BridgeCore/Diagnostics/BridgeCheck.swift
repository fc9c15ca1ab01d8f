public import BridgeConfig
package import BridgeHTTP
internal import BridgeJSON
public import BridgeSystem
internal import Synchronization
public import BridgeEvents
package import BridgeDirectus
internal import BridgeActivity
internal import BridgeSinks

/// `directus-bridge check`: live checks against Directus and the sinks, one `CheckResult` each, in the order a
/// person would fix them — server reachable, credentials, version and WebSockets (`/server/info`), each
/// subscription's collection and fields, the activity log (activity/auto mode), then each sink's own probes
/// (`SinkType.probe`: a webhook URL answers, a broker is reachable) and its configuration warnings (an unsigned
/// webhook: `SinkSettings.warnings(field:)`, what `validate` prints too).
///
/// When the server cannot be reached or the credentials are refused, the Directus checks that depend on them are
/// not attempted (they could only repeat the same failure); the sink checks still run.
public final class BridgeCheck: Sendable {
    /// The configuration under test.
    package let config: BridgeConfig
    /// `directus-bridge/<version>`, sent to webhook receivers.
    package let userAgent: String
    /// Whether webhooks get a signed test event instead of a HEAD request.
    package let sendTestEvent: Bool
    /// Directus's requests go through this (`directus.tls` as it is configured).
    package let transport: any HTTPTransport
    /// Directus REST without token management.
    package let client: DirectusClient
    /// Logs (stderr).
    package let logger: Logger
    /// Told about tokens learned while checking, so log lines never show them.
    package let logHandler: StderrLogHandler?
    private let redactor: Mutex<Redactor>

    /// Prepares the checks for `config`. `sendTestEvent` POSTs a signed test event to each webhook instead of a
    /// HEAD request. Tokens obtained by logging in are added to `logHandler`'s redaction list.
    public convenience init(
        config: BridgeConfig,
        userAgent: String,
        sendTestEvent: Bool,
        logHandler: StderrLogHandler?,
        logger: Logger
    ) {
        let directus = config.directus
        let http = HTTPClient(
            options: HTTPClientOptions(
                connectTimeout: directus.connectTimeout,
                requestTimeout: directus.requestTimeout,
                caFile: directus.tls.caFile,
                insecureSkipVerify: directus.tls.insecureSkipVerify,
                userAgent: userAgent,
                proxy: directus.proxy
            ),
            logger: logger.child(label: "http")
        )
        self.init(
            config: config,
            userAgent: userAgent,
            sendTestEvent: sendTestEvent,
            transport: http,
            logHandler: logHandler,
            logger: logger
        )
    }

    /// Prepares the checks with Directus's requests over `transport` (tests); each sink type probes with clients of
    /// its own.
    package init(
        config: BridgeConfig,
        userAgent: String,
        sendTestEvent: Bool,
        transport: any HTTPTransport,
        logHandler: StderrLogHandler?,
        logger: Logger
    ) {
        self.config = config
        self.userAgent = userAgent
        self.sendTestEvent = sendTestEvent
        self.transport = transport
        self.client = DirectusClient(
            baseURL: config.directus.restBaseURL,
            transport: transport,
            timeout: config.directus.requestTimeout
        )
        self.logHandler = logHandler
        self.logger = logger
        self.redactor = Mutex(Redactor(secrets: config.allSecrets))
    }

    /// Runs every check, handing each result to `report` as soon as it is known (secrets redacted), and returns
    /// whether all passed.
    public func run(report: (CheckResult) -> Void) async -> Bool {
        var passed = true
        func emit(_ result: CheckResult) {
            passed = passed && result.passed
            report(redacted(result))
        }
        if let session = await checkDirectusSide(emit: emit) {
            await session.end(client: client)
        }
        for (index, sink) in config.sinks.enumerated() {
            guard let registration = SinkCatalog.registration(of: sink) else { continue }
            let context = SinkProbeContext(
                index: index,
                name: sink.name,
                userAgent: userAgent,
                encoder: EventEncoder(format: sink.format, source: config.directus.restBaseURL),
                sendTestEvent: sendTestEvent,
                scope: SinkScope(
                    collections: sink.collections, events: sink.events,
                    subscribed: config.subscriptions.map(\.collection)),
                logger: logger.child(label: "check")
            )
            for result in await registration.probe(sink, context: context) { emit(result) }
            for warning in sink.settings.warnings(field: "sinks[\(index)]") {
                emit(.warning(warning.field, warning.detail, remedy: warning.remedy))
            }
        }
        if let state = await StateBackends.make(config).check(logger: logger) { emit(state) }
        for risk in TransportPolicy.risks(config) {
            emit(.warning(risk.field, risk.message, remedy: risk.remedy))
        }
        return passed
    }

    /// The Directus checks; returns the session to end (logout) when one was opened.
    private func checkDirectusSide(emit: (CheckResult) -> Void) async -> CheckSession? {
        let server = await checkServer()
        emit(server)
        guard server.passed else { return nil }

        let (credentials, session) = await checkCredentials()
        emit(credentials)
        guard let session else { return nil }

        for result in await checkServerInfo(session) { emit(result) }
        var unreadable: Set<String> = []
        for subscription in config.subscriptions {
            let (result, readable) = await checkCollection(subscription, session: session)
            emit(result)
            if !readable { unreadable.insert(subscription.collection) }
        }
        for result in await checkActivity(session, skipping: unreadable) { emit(result) }
        return session
    }

    /// Remembers a secret learned while checking (a login's tokens) so no line or log shows it.
    package func learnSecret(_ secret: String) {
        redactor.withLock { $0.add(secret) }
        logHandler?.addSecret(secret)
    }

    /// At most this many UTF-8 bytes of a result's detail, remedy or name are printed: a detail may quote a peer
    /// (Directus's error message, a receiver's answer), which must not make a row megabytes long.
    static let maximumTextLength = 2048

    /// `result` with secrets hidden in its raw texts, then cleaned and bounded (`PeerText`): a peer's escape
    /// sequences or line breaks cannot forge a row.
    private func redacted(_ result: CheckResult) -> CheckResult {
        redactor.withLock { redactor in
            func shown(_ text: String) -> String {
                PeerText.sanitized(text, redacting: redactor, maximumLength: Self.maximumTextLength)
            }
            var copy = result
            copy.detail = shown(result.detail)
            copy.remedy = result.remedy.map(shown)
            copy.check = shown(result.check)
            return copy
        }
    }
}

/// Who the checks run as: the token to send (nil for public access), and what to do at the end.
package struct CheckSession: Sendable {
    /// The DirectusAPI over the token (renewal is never needed within a check).
    package var api: DirectusAPI
    /// Whether a user is behind the token (not public access).
    package var isUser: Bool
    /// The refresh token of a login, to log out at the end.
    package var refreshToken: String?

    /// Logs out a login session so `check` leaves nothing behind.
    package func end(client: DirectusClient) async {
        if let refreshToken { await client.logout(refreshToken: refreshToken) }
    }
}
