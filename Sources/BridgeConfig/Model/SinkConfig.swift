/// One destination for change events: an entry of `sinks`.
///
/// The keys every sink type shares (`name`, `type`, `collections`, `events`, `format`) are decoded here; the rest by
/// the type's `SinkConfigType` into `settings`. Which types exist is not known to this module: the sinks layer
/// registers them (`SinkCatalog`) and passes them to `ConfigLoader`.
public struct SinkConfig: Sendable, Equatable {
    /// The sink's identity (`name`): its log field, metric label and state keys, whatever its position in `sinks`.
    /// Nil: the positional id of version 0.2, which `validate` warns about. Default: nil.
    public var name: String?
    /// The sink's `type` as written in the file (`ndjson`, `webhook`, …).
    public var type: String
    /// Only these collections (`collections`); empty means all. Default: `[]`.
    public var collections: [String]
    /// Only these events (`events`: create, update, delete, snapshot); empty means all. Default: `[]`.
    public var events: [EventKind]
    /// How each event is written (`format`). Default: `event`.
    public var format: EventFormat
    /// The type's own settings.
    public var settings: any SinkSettings

    /// Creates a sink configuration.
    public init(
        type: String, settings: any SinkSettings, collections: [String] = [], events: [EventKind] = [],
        format: EventFormat = .event, name: String? = nil
    ) {
        self.name = name
        self.type = type
        self.settings = settings
        self.collections = collections
        self.events = events
        self.format = format
    }

    /// The settings as the type that decoded them, or nil for another type.
    public func settings<Settings: SinkSettings>(as type: Settings.Type) -> Settings? {
        settings as? Settings
    }

    /// Whether an event of `kind` on `collection` goes to this sink (empty filters match everything).
    public func accepts(collection: String, event kind: EventKind) -> Bool {
        (collections.isEmpty || collections.contains(collection)) && (events.isEmpty || events.contains(kind))
    }

    /// Whether `text` may be a sink's `name`: 1–64 of `a-z 0-9 _ -`, one token of a shared-state key and a label
    /// value that needs no quoting in logs.
    public static func isValidName(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F || byte == 0x2D
            }
    }

    public static func == (lhs: SinkConfig, rhs: SinkConfig) -> Bool {
        lhs.name == rhs.name && lhs.type == rhs.type && lhs.collections == rhs.collections && lhs.events == rhs.events
            && lhs.format == rhs.format && lhs.settings.isEqual(to: rhs.settings)
    }
}

/// How a sink writes each event (`format`, docs/configuration.md "Output format"); every sink type has it.
public enum EventFormat: String, Sendable, Equatable, CaseIterable {
    /// The event object itself (an NDJSON line, a webhook body, a broker message value).
    case event
    /// A CloudEvents 1.0 JSON object in structured mode whose `data` is the event object.
    case cloudevents
}

/// The settings of one sink type (an NDJSON path and fsync policy, a webhook URL and its retry schedule, …).
public protocol SinkSettings: Sendable {
    /// Values the log redactor must hide: signing secrets, passwords, tokens, credential-like header values.
    var secrets: [String] { get }
    /// What the sink writes to, for the `starting` log line, `status` and `check`, without secrets: a URL as
    /// `ShownURL` shows it (`ndjson:-`, `webhook:https://hooks.example.com:443`). The default sink id hashes it
    /// (`SinkType.identity`): a type whose summary changes keeps its old text for its id, or its state is orphaned.
    var summary: String { get }
    /// The effective settings as YAML lines of the sink's list entry, after `type:` (`path: "-"`), with every
    /// secret shown as `ConfigText.redacted`.
    var yamlLines: [String] { get }
    /// Equality with settings of any type.
    func isEqual(to other: any SinkSettings) -> Bool
    /// What this entry (at `field`, e.g. `sinks[1]`) allows that its operator should know about. Default: nothing.
    func warnings(field: String) -> [ConfigWarning]
}

extension SinkSettings {
    /// No warnings.
    public func warnings(field: String) -> [ConfigWarning] { [] }
}

extension SinkSettings where Self: Equatable {
    /// Equal when `other` is of the same type and equal.
    public func isEqual(to other: any SinkSettings) -> Bool { (other as? Self) == self }
}

/// The collections and events whose events a sink entry takes: its `collections` and `events` filters, or every
/// subscribed collection and every event (snapshots included: `resync` may start one at any time). A broker sink's
/// topic or subject template must give a valid name for each.
package struct SinkScope: Sendable, Equatable {
    /// The subscribed collections the sink takes, each once, in file order.
    package var collections: [String]
    /// The events the sink takes.
    package var events: [EventKind]

    /// The scope of a sink whose filters are `collections` and `events` (empty: all) among the `subscribed`
    /// collections.
    package init(collections: [String], events: [EventKind], subscribed: [String]) {
        var seen: Set<String> = []
        self.collections = subscribed.filter {
            (collections.isEmpty || collections.contains($0)) && seen.insert($0).inserted
        }
        self.events = events.isEmpty ? EventKind.allCases : events
    }
}
