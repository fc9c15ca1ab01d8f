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

/// A destination for events. Sinks are used from the dispatcher thread only (never concurrently).
///
/// `accept` returns only when the events are as safe as the sink promises (NDJSON written and flushed — fsynced
/// with `fsync: always`; webhook events persisted in the outbox). If it throws, the dispatcher treats none of the
/// call's events as accepted and offers them again, so a sink must tolerate seeing an event twice.
public protocol EventSink: AnyObject {
    /// A name for logs and metrics (`ndjson:-`, `webhook:https://…`).
    var name: String { get }
    /// The sink's filter.
    var filter: EventFilter { get }
    /// Takes `events` (already filtered) durably, or throws a `SinkError`.
    func accept(_ events: [EncodedEvent]) throws(SinkError)
    /// Periodic work (e.g. `fsync: interval`); called at least every 250 ms.
    func tick(now: ContinuousClock.Instant) throws(SinkError)
    /// Forces what `accept` took onto stable storage. The dispatcher calls it before the activity cursor moves past
    /// those events, so a power loss can never leave the cursor ahead of the sink (at-least-once). Sinks whose
    /// `accept` is already as durable as promised do nothing.
    func makeDurable() throws(SinkError)
    /// Reopens files (SIGHUP, for logrotate).
    func reopen() throws(SinkError)
    /// Flushes and releases resources at shutdown.
    func close() throws(SinkError)
}

/// A sink failed to take events.
public struct SinkError: Error, Sendable, CustomStringConvertible {
    /// The sink's name.
    public var sink: String
    /// What failed, for a person.
    public var message: String
    /// Whether trying again later can succeed (disk full, receiver down) or not (stdout closed).
    public var isRetriable: Bool
    /// The sink is healthy but full (webhook `max_outbox`): intake pauses until it drains — not a failure.
    public var isBackpressure: Bool

    /// Creates an error.
    public init(sink: String, message: String, isRetriable: Bool, isBackpressure: Bool = false) {
        self.sink = sink
        self.message = message
        self.isRetriable = isRetriable
        self.isBackpressure = isBackpressure
    }

    public var description: String { "\(sink): \(message)" }
}
