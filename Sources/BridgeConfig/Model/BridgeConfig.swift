public import BridgeSystem

/// The whole `bridge.yaml`, typed, validated and with every default filled in.
///
/// Build it with `ConfigLoader`; the initialisers exist for tests and for code that assembles a configuration.
/// `description` is a redacted dump (secrets never appear); `allSecrets` feeds the log redactor.
public struct BridgeConfig: Sendable, Equatable {
    /// Where Directus is and how to talk to it (`directus`). Required (its `url`).
    ///
    /// Only in a configuration whose `directus` section was read: one loaded with `ConfigScope.withoutDirectus` has
    /// none, and a command that loads so never contacts Directus (reading this there is a programmer error).
    public var directus: DirectusConfig {
        get {
            guard let directusSection else {
                preconditionFailure("the directus section was not read (ConfigScope.withoutDirectus)")
            }
            return directusSection
        }
        set { directusSection = newValue }
    }
    /// The `directus` section, or nil when the configuration was loaded without it (`ConfigScope.withoutDirectus`).
    public private(set) var directusSection: DirectusConfig?
    /// What to subscribe to (`subscriptions`). Required, at least one; uids are unique.
    public var subscriptions: [SubscriptionConfig]
    /// How changes are read and buffered (`delivery`).
    public var delivery: DeliveryConfig
    /// Where changes go (`sinks`). Required, at least one.
    public var sinks: [SinkConfig]
    /// The metrics and health endpoint (`http`).
    public var http: HTTPConfig
    /// Logging on stderr (`log`).
    public var log: LogConfig
    /// Where progress is kept, and whether bridges share it (`state`).
    public var state: StateConfig
    /// How long SIGTERM/SIGINT may spend draining before the bridge gives up (`shutdown_timeout`).
    /// Default: 10s.
    public var shutdownTimeout: Duration

    /// The default of `shutdownTimeout`.
    public static let defaultShutdownTimeout: Duration = .seconds(10)

    /// Creates a configuration; every argument but `directus`, `subscriptions` and `sinks` has its default. A nil
    /// `directus` is a configuration loaded `withoutDirectus`.
    public init(
        directus: DirectusConfig?,
        subscriptions: [SubscriptionConfig],
        delivery: DeliveryConfig = DeliveryConfig(),
        sinks: [SinkConfig],
        http: HTTPConfig = HTTPConfig(),
        log: LogConfig = LogConfig(),
        state: StateConfig = StateConfig(),
        shutdownTimeout: Duration = BridgeConfig.defaultShutdownTimeout
    ) {
        self.directusSection = directus
        self.subscriptions = subscriptions
        self.delivery = delivery
        self.sinks = sinks
        self.http = http
        self.log = log
        self.state = state
        self.shutdownTimeout = shutdownTimeout
    }
}

/// Where change deliveries are read from and how much is buffered (`delivery`).
public struct DeliveryConfig: Sendable, Equatable {
    /// Where changes come from (`delivery.mode`). Default: `auto`.
    public var mode: DeliveryMode
    /// Activity mode: how often the activity log is read without a socket trigger (`delivery.poll_interval`).
    /// Default: 5s.
    public var pollInterval: Duration
    /// Directory for the cursor, the webhook outbox and dead letters (`delivery.state_dir`), relative to the
    /// working directory unless absolute. Default: `./.bridge-state`.
    public var stateDir: String
    /// Events held in memory between the socket and the sinks (`delivery.max_queue`), 1…10,000,000.
    /// Default: 100000.
    public var maxQueue: Int
    /// *Extension.* Bytes of event lines held in memory between the socket and the sinks
    /// (`delivery.max_queue_bytes`), 1MiB…1TiB, a whole number of bytes or a size such as `256MiB`.
    /// Default: 256MiB.
    public var maxQueueBytes: Int

    /// The allowed range of `maxQueue`.
    public static let maxQueueRange: ClosedRange<Int> = 1...10_000_000
    /// The allowed range of `maxQueueBytes`.
    public static let maxQueueBytesRange: ClosedRange<Int> = (1 << 20)...(1 << 40)

    /// Creates a delivery configuration with the contract's defaults.
    public init(
        mode: DeliveryMode = .auto,
        pollInterval: Duration = .seconds(5),
        stateDir: String = "./.bridge-state",
        maxQueue: Int = 100_000,
        maxQueueBytes: Int = 256 << 20
    ) {
        self.mode = mode
        self.pollInterval = pollInterval
        self.stateDir = stateDir
        self.maxQueue = maxQueue
        self.maxQueueBytes = maxQueueBytes
    }
}

/// Where changes come from (`delivery.mode`).
public enum DeliveryMode: String, Sendable, Equatable, CaseIterable {
    /// Read the activity log (`directus_activity`), triggered by socket events and polled; exits 77 without access.
    case activity
    /// Socket events only.
    case live
    /// `activity` when the activity log is readable, else `live` with a warning.
    case auto
}

/// The metrics and health HTTP endpoint (`http`).
public struct HTTPConfig: Sendable, Equatable {
    /// Where `/metrics`, `/healthz` and `/readyz` are served (`http.listen`, `host:port`); nil turns it off.
    /// Default: nil (`""`).
    public var listen: ListenAddress?

    /// Creates an HTTP configuration (off by default).
    public init(listen: ListenAddress? = nil) {
        self.listen = listen
    }
}

/// Logging on stderr (`log`).
public struct LogConfig: Sendable, Equatable {
    /// The lowest level written (`log.level`: trace, debug, info, warn, error). Default: `info`.
    public var level: LogLevel
    /// The line format (`log.format`: text or json). Default: `text`.
    public var format: LogFormat
    /// How often the periodic stats line (events/s, lag, queue, outbox, dead letters) is logged at info level
    /// (`log.stats_interval`); zero turns it off. Default: 1m.
    public var statsInterval: Duration
    /// How often long work (snapshots, backfills) logs a progress line at info level (`log.progress_interval`).
    /// Default: 5s.
    public var progressInterval: Duration

    /// The values `log.level` (and `run --log-level`) takes.
    public static let levelNames = ["trace", "debug", "info", "warn", "error"]
    /// The values `log.format` (and `run --log-format`) takes.
    public static let formatNames = ["text", "json"]

    /// Creates a log configuration with the defaults.
    public init(
        level: LogLevel = .info, format: LogFormat = .text, statsInterval: Duration = .seconds(60),
        progressInterval: Duration = .seconds(5)
    ) {
        self.level = level
        self.format = format
        self.statsInterval = statsInterval
        self.progressInterval = progressInterval
    }
}

/// A change type, as `events` lists in subscriptions (`create`, `update`, `delete`) and sinks (also `snapshot`).
public enum EventKind: String, Sendable, Equatable, CaseIterable {
    /// An item was created.
    case create
    /// An item was updated.
    case update
    /// An item was deleted.
    case delete
    /// An item emitted by a snapshot (sink filters only).
    case snapshot

    /// The events a subscription can ask Directus for (snapshots come from `snapshot: true`).
    public static let subscribable: [EventKind] = [.create, .update, .delete]
}
