package import BridgeConfig
package import BridgeEvents

/// A kind of sink: what `SinkCatalog` registers for each `type:` of `sinks`. Adding a sink type means a new
/// folder with its settings, its connector and one of these, plus one line in `SinkCatalog` (docs/ARCHITECTURE.md,
/// "How to add a sink").
package protocol SinkType {
    /// The type's settings (`SinkConfig.settings`).
    associatedtype Settings: SinkSettings
    /// Its `type:` name, keys and decoder.
    static var configType: SinkConfigType { get }
    /// The id of an entry without a `name` (in the state directory, logs and metric labels): it must stay the same
    /// across restarts while the entry keeps its position and target. Default: `<index>-<type>-<hash of the summary>`.
    static func identity(of settings: Settings, index: Int) -> String
    /// Whether the sink keeps state of its own in `delivery.state_dir` (the webhook outbox), so that a live-mode
    /// bridge with it must claim the directory too (`StateDirectoryLock`). Default: false.
    static var keepsLocalState: Bool { get }
    /// Builds the connector for one entry. It runs on a thread of the blocking pool (`RuntimeComponents.build`), so
    /// it may open files; it must not connect or wait on the network: the runner calls `connect`.
    static func makeConnector(_ settings: Settings, context: SinkContext) throws(RuntimeOutcome) -> any SinkConnector
    /// `check`'s lines for one entry: is the target reachable, are the credentials accepted, does the topic or
    /// stream exist — and with `--send-test-event`, does it take a test event.
    static func probe(_ settings: Settings, context: SinkProbeContext) async -> [CheckResult]
    /// What the entry's transport exposes (`TransportPolicy`): credentials sent unencrypted to a host that is not a
    /// loopback address, verification switched off. Fields are relative to the entry. Default: none.
    static func transportRisks(_ settings: Settings) -> [TransportRisk]
}

extension SinkType {
    package static var keepsLocalState: Bool { false }

    package static func transportRisks(_ settings: Settings) -> [TransportRisk] { [] }

    package static func identity(of settings: Settings, index: Int) -> String {
        SinkIdentity.id(index: index, type: configType.name, target: settings.summary)
    }
}

/// Everything `SinkCatalog` knows about one sink type, with its settings' type erased.
package struct SinkRegistration: Sendable {
    /// Its `type:` name, keys and decoder.
    package let configType: SinkConfigType
    /// `SinkType.keepsLocalState` of the type.
    package let keepsLocalState: Bool
    private let identity: @Sendable (SinkConfig, Int) -> String?
    private let make: @Sendable (SinkConfig, SinkContext) throws(RuntimeOutcome) -> (any SinkConnector)?
    private let probe: @Sendable (SinkConfig, SinkProbeContext) async -> [CheckResult]?
    private let risks: @Sendable (SinkConfig) -> [TransportRisk]

    /// Registers `type`.
    package init<T: SinkType>(_ type: T.Type) {
        configType = T.configType
        keepsLocalState = T.keepsLocalState
        identity = { sink, index in sink.settings(as: T.Settings.self).map { T.identity(of: $0, index: index) } }
        make = { sink, context throws(RuntimeOutcome) in
            guard let settings = sink.settings(as: T.Settings.self) else { return nil }
            return try T.makeConnector(settings, context: context)
        }
        probe = { sink, context in
            guard let settings = sink.settings(as: T.Settings.self) else { return nil }
            return await T.probe(settings, context: context)
        }
        risks = { sink in sink.settings(as: T.Settings.self).map(T.transportRisks) ?? [] }
    }

    /// Whether `sink` is an entry of this type.
    package func handles(_ sink: SinkConfig) -> Bool { sink.type == configType.name }

    /// The stable id of `sink`, the entry at `index`: its `name`, else its positional id.
    package func identity(of sink: SinkConfig, index: Int) -> String {
        sink.name ?? positionalIdentity(of: sink, index: index)
    }

    /// The id `sink` has without a `name` (`SinkType.identity`), which its saved progress carries until a name is
    /// added (`SinkRenames`).
    package func positionalIdentity(of sink: SinkConfig, index: Int) -> String {
        identity(sink, index) ?? SinkIdentity.id(index: index, type: sink.type, target: sink.settings.summary)
    }

    /// The connector for `sink`.
    package func makeConnector(_ sink: SinkConfig, context: SinkContext) throws(RuntimeOutcome) -> any SinkConnector {
        guard let connector = try make(sink, context) else {
            throw .failure("sinks[\(context.index)]: the settings are not of type \(configType.name)")
        }
        return connector
    }

    /// What `sink`, the entry `entry` (`sinks[2]`) with the id `id`, exposes in transport.
    package func transportRisks(of sink: SinkConfig, entry: String, id: String) -> [TransportRisk] {
        risks(sink).map { $0.placed(inEntry: entry, sink: id) }
    }

    /// `check`'s lines for `sink`.
    package func probe(_ sink: SinkConfig, context: SinkProbeContext) async -> [CheckResult] {
        await probe(sink, context) ?? []
    }
}
