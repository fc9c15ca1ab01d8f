package import BridgeConfig
package import BridgeSystem
internal import Synchronization
package import BridgeEvents

/// What a sink type gets to build a connector (`SinkType.makeConnector`).
package struct SinkContext: Sendable {
    /// The entry's position in `sinks`.
    package var index: Int
    /// The sink's stable id (`SinkType.identity`).
    package var sinkID: String
    /// The sink's `format`: the runner encodes events with it before `accept`; the sink reads its `contentType`
    /// for the headers it sends.
    package var encoder: EventEncoder
    /// Where named sinks kept their rows before they had a name (`SinkCatalog.renames`): the outbox moves them to
    /// the names when it opens. Default: none.
    package var renames = SinkRenames()
    /// `delivery.state_dir`.
    package var stateDir: String
    /// `directus-bridge/<version>`.
    package var userAgent: String
    /// `shutdown_timeout`: the whole graceful shutdown, of which a sink's draining is a part.
    package var shutdownTimeout: Duration
    /// Where the sink registers its metrics.
    package var registry: MetricsRegistry
    /// The periodic stats line, for the sink's gauges.
    package var stats: StatsReporter?
    /// The sink's logger.
    package var logger: Logger
    /// Resources the sinks of one run share (the webhook outbox file).
    package var shared: SinkResources
    /// The state backend as sinks see it (`state.backend`): where dead letters go, and whether events kept on this
    /// machine hold the cursor back. Default: `LocalSinkState`.
    package var state: any SinkState = LocalSinkState()

    /// Creates a context.
    package init(
        index: Int, sinkID: String, encoder: EventEncoder = .plain, stateDir: String, userAgent: String,
        shutdownTimeout: Duration, registry: MetricsRegistry, stats: StatsReporter?, logger: Logger,
        shared: SinkResources
    ) {
        self.index = index
        self.sinkID = sinkID
        self.encoder = encoder
        self.stateDir = stateDir
        self.userAgent = userAgent
        self.shutdownTimeout = shutdownTimeout
        self.registry = registry
        self.stats = stats
        self.logger = logger
        self.shared = shared
    }
}

/// Resources shared by the sinks of one run, made by the first sink that asks for them.
package final class SinkResources: Sendable {
    private let values = Mutex<[ObjectIdentifier: any Sendable]>([:])

    /// Creates an empty set.
    package init() {}

    /// The shared `T`, made by `make` the first time (a failure is thrown and nothing is kept).
    package func value<T: Sendable>(_ type: T.Type = T.self, make: () throws -> T) rethrows -> T {
        try values.withLock { values in
            if let existing = values[ObjectIdentifier(type)] as? T { return existing }
            let made = try make()
            values[ObjectIdentifier(type)] = made
            return made
        }
    }

    /// The shared `T`, when a sink made one.
    package func existing<T: Sendable>(_ type: T.Type) -> T? {
        values.withLock { $0[ObjectIdentifier(type)] as? T }
    }
}

/// What a sink type gets for `check` (`SinkType.probe`).
package struct SinkProbeContext: Sendable {
    /// The entry's position in `sinks`.
    package var index: Int
    /// The entry's `name`, if it has one.
    package var name: String?
    /// `directus-bridge/<version>`.
    package var userAgent: String
    /// The sink's `format`, for the test event.
    package var encoder: EventEncoder
    /// `--send-test-event`: deliver a test event instead of only probing.
    package var sendTestEvent: Bool
    /// The subscribed collections and the events this sink takes: a broker sink checks the topic or subject of each.
    package var scope: SinkScope
    /// The collection a test event names (the first this sink takes).
    package var testCollection: String { scope.collections.first ?? "" }
    /// A new test event for `--send-test-event`: naming `testCollection`, in the sink's format.
    package var testEvent: SinkTestEvent { SinkTestEvent(collection: testCollection, encoder: encoder) }
    /// Logs (stderr).
    package var logger: Logger

    /// The sink's check line name: its type, its name (or `sinks[N]` when it has none: two sinks may share a host and
    /// port) and where it delivers, shown as `target` (scheme://host:port, never a path or credentials).
    package func checkName(type: String, target: String) -> String {
        "\(type) \(name ?? "sinks[\(index)]") \(target)"
    }

    /// Creates a context.
    package init(
        index: Int, name: String? = nil, userAgent: String, encoder: EventEncoder = .plain, sendTestEvent: Bool,
        scope: SinkScope, logger: Logger
    ) {
        self.index = index
        self.name = name
        self.userAgent = userAgent
        self.encoder = encoder
        self.sendTestEvent = sendTestEvent
        self.scope = scope
        self.logger = logger
    }
}
