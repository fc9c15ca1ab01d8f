public import BridgeConfig
public import BridgeJSON
public import BridgeEvents

/// Which events a sink takes (`collections` / `events` of a sink in bridge.yaml; empty = all).
public struct EventFilter: Sendable, Equatable {
    /// Collections to pass; empty passes every collection.
    public var collections: Set<String>
    /// Events to pass; empty passes every event.
    public var events: Set<ChangeEvent>

    /// Creates a filter.
    public init(collections: Set<String> = [], events: Set<ChangeEvent> = []) {
        self.collections = collections
        self.events = events
    }

    /// Whether every event passes (no copy needed).
    public var passesEverything: Bool { collections.isEmpty && events.isEmpty }

    /// Whether `event` passes.
    public func matches(_ event: EncodedEvent) -> Bool {
        (collections.isEmpty || collections.contains(event.collection))
            && (events.isEmpty || events.contains(event.event))
    }
}

extension EventFilter {
    /// The filter of a `sinks` entry.
    public init(_ sink: SinkConfig) {
        self.init(
            collections: Set(sink.collections),
            events: Set(sink.events.compactMap { ChangeEvent(rawValue: $0.rawValue) })
        )
    }
}
