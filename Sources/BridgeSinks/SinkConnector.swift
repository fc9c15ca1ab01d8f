public import BridgeSystem
public import BridgeEvents

/// A destination for events: the contract every sink type implements, modelled on Benthos's output contract
/// (connect, write, close) and registered once in `SinkCatalog`.
///
/// The contract is async end to end. The bridge drives a connector from two places:
/// * its **runner** awaits `connect`, then `accept` for each batch, `makeDurable` before a cursor moves past
///   accepted events, `tick` periodically, `reopen` on SIGHUP and `close` at the end — one call at a time, as one
///   task on the sink's own executor (a `DedicatedThreadExecutor`: a short blocking call, a `write(2)` or an SQLite
///   commit, holds that thread and never Swift's cooperative pool; a wait for a broker suspends the task);
/// * its **background work**, `run(until:)`, runs as a service beside the pipeline (the webhook sink's delivery
///   loop) and is asked to stop after the runner closed the connector.
///
/// A retriable `SinkError` makes the runner try again with backoff (the connector must tolerate seeing events
/// again); a non-retriable one stops the bridge (stdout closed).
public protocol SinkConnector: AnyObject, Sendable {
    /// A name for logs and metric labels, without secrets (`ndjson:-`, `webhook:https://host/path`).
    var name: String { get }
    /// Prepares to accept (a broker connection); retried with backoff until it succeeds. Default: nothing.
    func connect() async throws(SinkError)
    /// Background work until `shutdown` triggers (then it finishes what it holds, e.g. attempts in flight) or the
    /// task is cancelled (then it returns at once). Default: waits for `shutdown`.
    func run(until shutdown: ShutdownSignal) async throws
    /// Takes `events` (already filtered for this sink) as safely as the sink promises: written and flushed,
    /// persisted in an outbox, handed to a producer.
    func accept(_ events: [EncodedEvent]) async throws(SinkError)
    /// Forces what `accept` took onto stable storage, or waits until the broker acknowledged it. Called before a
    /// cursor moves past those events (at-least-once). Default: nothing (accept is already as durable).
    func makeDurable() async throws(SinkError)
    /// Periodic work (an `fsync: interval`), called at least once a second. Default: nothing.
    func tick(now: ContinuousClock.Instant) async throws(SinkError)
    /// Reopens files (SIGHUP, for logrotate). Default: nothing.
    func reopen() async throws(SinkError)
    /// Flushes and releases what `accept` uses, after the last batch.
    func close() async throws(SinkError)
}

extension SinkConnector {
    public func connect() async throws(SinkError) {}
    public func run(until shutdown: ShutdownSignal) async throws { await shutdown.wait() }
    public func makeDurable() async throws(SinkError) {}
    public func tick(now: ContinuousClock.Instant) async throws(SinkError) {}
    public func reopen() async throws(SinkError) {}
}

/// A sink failed to take events.
public struct SinkError: Error, Sendable, CustomStringConvertible {
    /// The sink's name.
    public var sink: String
    /// What failed, for a person.
    public var message: String
    /// Whether trying again later can succeed (disk full, receiver down) or not (stdout closed).
    public var isRetriable: Bool
    /// The sink is healthy but full (a webhook outbox at `max_outbox`): not a failure. In activity mode the sink
    /// waits at its cursor; in live mode it drops the batch and counts it.
    public var isBackpressure: Bool
    /// With `isBackpressure`: how many events from the start of the batch the sink took before it was full. The
    /// runner offers only the rest again (activity mode) or counts only the rest as dropped (live mode).
    public var acceptedPrefix: Int

    /// Creates an error.
    public init(
        sink: String, message: String, isRetriable: Bool, isBackpressure: Bool = false, acceptedPrefix: Int = 0
    ) {
        self.sink = sink
        self.message = message
        self.isRetriable = isRetriable
        self.isBackpressure = isBackpressure
        self.acceptedPrefix = acceptedPrefix
    }

    public var description: String { "\(sink): \(message)" }
}
