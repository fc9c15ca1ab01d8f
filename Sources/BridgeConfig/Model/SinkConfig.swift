/// One destination for change events (an entry of `sinks`, chosen by its `type`).
public enum SinkConfig: Sendable, Equatable {
    /// `type: ndjson`: one JSON line per change to stdout or a file.
    case ndjson(NDJSONSinkConfig)
    /// `type: webhook`: one signed POST per change.
    case webhook(WebhookSinkConfig)

    /// The sink's `type` as written in the file.
    public var type: String {
        switch self {
        case .ndjson: "ndjson"
        case .webhook: "webhook"
        }
    }

    /// The collections this sink takes; empty means all.
    public var collections: [String] {
        switch self {
        case .ndjson(let sink): sink.collections
        case .webhook(let sink): sink.collections
        }
    }

    /// The events this sink takes; empty means all.
    public var events: [EventKind] {
        switch self {
        case .ndjson(let sink): sink.events
        case .webhook(let sink): sink.events
        }
    }

    /// Whether an event of `kind` on `collection` goes to this sink (empty filters match everything).
    public func accepts(collection: String, event kind: EventKind) -> Bool {
        (collections.isEmpty || collections.contains(collection)) && (events.isEmpty || events.contains(kind))
    }
}

/// How often an NDJSON file is flushed to disk (`fsync`).
public enum FsyncPolicy: String, Sendable, Equatable, CaseIterable {
    /// After every line.
    case always
    /// At least once a second, and at shutdown.
    case interval
    /// Never explicitly (the kernel decides).
    case never
}

/// An NDJSON sink (`type: ndjson`).
public struct NDJSONSinkConfig: Sendable, Equatable {
    /// `-` for stdout, otherwise a file appended to and reopened on SIGHUP (`path`). Default: `-`.
    public var path: String
    /// Flush policy for files (`fsync`); ignored for stdout. Default: `interval`.
    public var fsync: FsyncPolicy
    /// Only these collections (`collections`); empty means all. Default: `[]`.
    public var collections: [String]
    /// Only these events (`events`: create, update, delete, snapshot); empty means all. Default: `[]`.
    public var events: [EventKind]

    /// True when the sink writes to stdout.
    public var isStandardOutput: Bool { path == "-" }

    /// Creates an NDJSON sink configuration with the contract's defaults.
    public init(
        path: String = "-",
        fsync: FsyncPolicy = .interval,
        collections: [String] = [],
        events: [EventKind] = []
    ) {
        self.path = path
        self.fsync = fsync
        self.collections = collections
        self.events = events
    }
}

/// An extra request header of a webhook sink (`headers`), in file order.
public struct HTTPHeader: Sendable, Equatable {
    /// The header name as written.
    public var name: String
    /// The value.
    public var value: String

    /// Creates a header.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A webhook sink (`type: webhook`), signed the Standard Webhooks way.
public struct WebhookSinkConfig: Sendable, Equatable {
    /// Where events are POSTed (`url`). Required.
    public var url: HTTPURL
    /// Signing secrets (`secret`: one string or a list for key rotation, or `secret_file`), each `whsec_<base64>`
    /// or raw text; every secret signs, signatures space-separated. Empty means unsigned. Default: `[]`.
    public var secrets: [String]
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
    /// Only these collections (`collections`); empty means all. Default: `[]`.
    public var collections: [String]
    /// Only these events (`events`); empty means all. Default: `[]`.
    public var events: [EventKind]

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
        collections: [String] = [],
        events: [EventKind] = []
    ) {
        self.url = url
        self.maxOutbox = maxOutbox
        self.secrets = secrets
        self.headers = headers
        self.timeout = timeout
        self.maxAttempts = maxAttempts
        self.maxInFlight = maxInFlight
        self.retrySchedule = retrySchedule
        self.collections = collections
        self.events = events
    }

    /// The nominal delay (before jitter) between attempt `attempt` and the next one: `retrySchedule[attempt-1]`,
    /// the last entry repeating. `attempt` starts at 1.
    public func retryDelay(afterAttempt attempt: Int) -> Duration {
        precondition(attempt >= 1, "attempts are numbered from 1")
        guard let last = retrySchedule.last else { return .zero }
        return attempt - 1 < retrySchedule.count ? retrySchedule[attempt - 1] : last
    }
}
