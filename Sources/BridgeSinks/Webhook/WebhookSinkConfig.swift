public import BridgeConfig
public import BridgeSystem
internal import BridgeEvents

/// A webhook sink (`type: webhook`), signed the Standard Webhooks way.
public struct WebhookSinkConfig: SinkSettings, Equatable {
    /// Where events are POSTed (`url`). Required.
    public var url: HTTPURL
    /// Signing secrets (`secret`: one string or a list for key rotation, or `secret_file`), each `whsec_<base64>`
    /// or raw text; every secret signs, signatures space-separated. Empty means unsigned. Default: `[]`.
    public var signingSecrets: [String]
    /// Extra request headers (`headers`), in file order. Default: none.
    public var headers: [HTTPHeader]
    /// Limit for one attempt (`timeout`). Default: 15s.
    public var timeout: Duration
    /// Attempts before dead-lettering (`max_attempts`), 1…1000. Default: 12.
    public var maxAttempts: Int
    /// Concurrent requests (`max_in_flight`), 1…1024; events of one item are never concurrent. Default: 32.
    public var maxInFlight: Int
    /// Delay before attempt 2, 3, … (`retry_schedule`), the last entry repeating; non-empty.
    /// Default: `[5s, 30s, 2m, 5m, 15m, 30m, 1h, 2h, 4h, 8h, 8h]`.
    public var retrySchedule: [Duration]
    /// Events the sink's outbox may hold before intake pauses (`max_outbox`), 1…10,000,000: above it the sink
    /// refuses new events until deliveries catch up (backpressure). Default: 100000.
    public var maxOutbox: Int
    /// The CA trusted beside the system store for the receiver's certificate: `directus.tls.ca_file` (an in-house CA
    /// usually signs the receivers too), never skipping verification. Not a key of the entry. Default: none.
    public var caFile: String?
    /// The HTTP proxy deliveries and `check` tunnel through (`proxy`: `http://[user:password@]host:port`, as
    /// `directus.proxy`); nil reaches the receiver directly, whatever the environment says. Default: none.
    public var proxy: HTTPProxy?

    /// The allowed range of `maxOutbox`.
    public static let maxOutboxRange: ClosedRange<Int> = 1...10_000_000
    /// The default of `maxOutbox`.
    public static let defaultMaxOutbox = 100_000
    /// The allowed range of `maxAttempts`.
    public static let maxAttemptsRange: ClosedRange<Int> = 1...1000
    /// The allowed range of `maxInFlight`.
    public static let maxInFlightRange: ClosedRange<Int> = 1...1024
    /// The default `retrySchedule`.
    public static let defaultRetrySchedule: [Duration] = [
        .seconds(5), .seconds(30), .seconds(120), .seconds(300), .seconds(900), .seconds(1800), .seconds(3600),
        .seconds(7200), .seconds(14400), .seconds(28800), .seconds(28800),
    ]

    /// The default of `timeout`.
    public static let defaultTimeout: Duration = .seconds(15)
    /// The default of `maxAttempts`.
    public static let defaultMaxAttempts = 12
    /// The default of `maxInFlight`.
    public static let defaultMaxInFlight = 32

    /// Creates a webhook sink configuration with the contract's defaults for everything but `url`.
    public init(
        url: HTTPURL,
        secrets: [String] = [],
        headers: [HTTPHeader] = [],
        timeout: Duration = WebhookSinkConfig.defaultTimeout,
        maxAttempts: Int = WebhookSinkConfig.defaultMaxAttempts,
        maxInFlight: Int = WebhookSinkConfig.defaultMaxInFlight,
        retrySchedule: [Duration] = WebhookSinkConfig.defaultRetrySchedule,
        maxOutbox: Int = WebhookSinkConfig.defaultMaxOutbox,
        caFile: String? = nil,
        proxy: HTTPProxy? = nil
    ) {
        self.url = url
        self.proxy = proxy
        self.caFile = caFile
        self.maxOutbox = maxOutbox
        self.signingSecrets = secrets
        self.headers = headers
        self.timeout = timeout
        self.maxAttempts = maxAttempts
        self.maxInFlight = maxInFlight
        self.retrySchedule = retrySchedule
    }

    /// The nominal delay (before jitter) between attempt `attempt` and the next one: `retrySchedule[attempt-1]`,
    /// the last entry repeating. `attempt` starts at 1.
    public func retryDelay(afterAttempt attempt: Int) -> Duration {
        precondition(attempt >= 1, "attempts are numbered from 1")
        guard let last = retrySchedule.last else { return .zero }
        return attempt - 1 < retrySchedule.count ? retrySchedule[attempt - 1] : last
    }

    /// Without a secret the deliveries are unsigned: anyone who can reach the receiver can forge them.
    public func warnings(field: String) -> [ConfigWarning] {
        guard signingSecrets.isEmpty else { return [] }
        return [
            ConfigWarning(
                field: field,
                detail: "a webhook without a secret: its deliveries are unsigned, so the receiver cannot tell them "
                    + "from forged requests",
                remedy: "set secret (or secret_file) and verify the webhook-signature header on the receiver")
        ]
    }

    /// The signing secrets (also without their `whsec_` prefix), the values of credential-like headers and the
    /// proxy's password.
    public var secrets: [String] {
        let signing: [String] = signingSecrets.flatMap {
            $0.hasPrefix("whsec_") ? [$0, String($0.dropFirst(6))] : [$0]
        }
        return signing + headers.flatMap(\.secretValues) + proxySecrets
    }

    private var proxySecrets: [String] { proxy?.password.map { [$0] } ?? [] }

    /// `webhook:https://host:port`: never the path or query (README.md, "How URLs are shown").
    public var summary: String { "webhook:" + url.shown }

    public var yamlLines: [String] {
        var lines = [
            "url: \(ConfigText.quoted(url.description))",
            "secret: [\(signingSecrets.map { _ in ConfigText.redacted }.joined(separator: ", "))]",
            headers.isEmpty ? "headers: {}" : "headers:",
        ]
        for header in headers {
            let value = header.isSensitive ? ConfigText.redacted : ConfigText.quoted(header.value)
            lines.append("  \(ConfigText.quoted(header.name)): \(value)")
        }
        lines += [
            "timeout: \(ConfigText.duration(timeout))",
            "max_attempts: \(maxAttempts)",
            "max_in_flight: \(maxInFlight)",
            "retry_schedule: \(ConfigText.list(retrySchedule.map(ConfigText.duration)))",
            "max_outbox: \(maxOutbox)",
        ]
        if let proxy { lines.append("proxy: \(ConfigText.proxy(proxy))") }
        return lines
    }
}

