package import BridgeEvents

/// What a broker sink (`BrokerSink`) needs from a broker's client: Kafka's producer and JetStream's publisher are
/// adapted to this, so the delivery rules (bounded outstanding, acknowledgement before the cursor moves, sending
/// again what failed, draining) are written once.
///
/// Called by the sink's runner only, one call at a time, from one task (async, like `SinkConnector`: a client that
/// waits for its broker suspends the runner's task, one that blocks briefly holds only the runner's own thread).
/// Three broker sinks are written against it (docs/ARCHITECTURE.md, "Broker sinks").
package protocol BrokerClient: AnyObject {
    /// Hands `events` (in order) to the client; `completion` gets one outcome per event, in the same order, once
    /// the last is known (on a thread of the client's; keep it short). Returns once every event is held by the
    /// client (the sink never submits more than the client's bound), throwing only when nothing was handed over.
    func submit(_ events: [EncodedEvent], completion: @escaping @Sendable (BrokerOutcomes) -> Void)
        async throws(SinkError)
    /// Sends at once what the client holds back to fill a batch (Kafka's `linger.ms`), and whatever comes next too,
    /// until nothing is outstanding, without waiting: called when the sink is about to wait for every outcome
    /// (`makeDurable`), as nothing more will come to fill a batch. Default: nothing (the client holds nothing back).
    func expedite()
    /// Sends at once what the client holds back to fill a batch, then batches again, without waiting: called when
    /// the sink waits for room at its bound (nothing more comes meanwhile, but once room frees up it streams on, and
    /// sending every later message at once would make small batches). Default: nothing.
    func sendLingering()
    /// Serves, on the calling thread (the runner's), the outcomes that arrived (their completions run here), waiting
    /// at most `timeout` (nil: until one arrives) when none has: for a client whose outcomes are best served by the
    /// thread that submits (Kafka: librdkafka frees each message on the thread that serves its report, and glibc's
    /// malloc is fastest when that is the thread that allocated it). Once called, and after `submit`, the client
    /// serves its outcomes only there until `handOutcomesBack()`. Returns false (the default) for a client whose
    /// outcomes arrive on threads of its own: the sink waits on its tracker's condition instead.
    func serveOutcomes(waitingAtMost timeout: Duration?) -> Bool
    /// The runner returns from the sink's call, to wait for something else: the client's own threads serve its
    /// outcomes again. Default: nothing.
    func handOutcomesBack()
    /// Why the client cannot deliver right now (connection lost, credentials refused), for logs and readiness;
    /// nil while healthy.
    var problem: String? { get }
    /// True when the client can never deliver again (a closed connection, a fatal producer error): the sink closes
    /// it and opens a new one.
    var isBroken: Bool { get }
    /// Waits up to `drainTimeout` for what it holds, then releases everything; what is still held gets a `retry`
    /// outcome before this returns.
    func close(drainTimeout: Duration) async
}

extension BrokerClient {
    package func expedite() {}
    package func sendLingering() {}
    package func serveOutcomes(waitingAtMost timeout: Duration?) -> Bool { false }
    package func handOutcomesBack() {}
}

/// What became of one event handed to a broker.
package enum BrokerOutcome: Sendable {
    /// The broker has it (a JetStream acknowledgement, a Kafka delivery report); `duplicate` when the broker
    /// already had it (a re-sent event JetStream dropped by its `Nats-Msg-Id`).
    case delivered(duplicate: Bool)
    /// The broker will never take it (too large, an invalid subject or topic): the sink stores it as a dead letter
    /// (`directus-bridge dlq`) before its cursor may move past it, and logs it at error level.
    case rejected(String)
    /// Not delivered but deliverable: the sink sends it again (on a new client if this one broke).
    case retry(String)
}

/// One outcome per event of a submitted batch, in order: an array's, or looked up by index in what the client keeps
/// anyway (Kafka's delivery batch), so that a batch of hundreds of events needs no array of outcomes (an allocation of
/// a kilobyte or more per batch, which glibc serves only after merging every small block freed since:
/// BENCHMARKS.md, "Kafka: the sink's per-event work").
package struct BrokerOutcomes: RandomAccessCollection, Sendable {
    private let lookup: @Sendable (Int) -> BrokerOutcome

    /// `count` outcomes, the one at `index` given by `lookup(index)` (called on the thread that reads them, while
    /// the completion runs).
    package init(count: Int, lookup: @escaping @Sendable (Int) -> BrokerOutcome) {
        self.endIndex = count
        self.lookup = lookup
        self.allDelivered = false
    }

    /// `count` events, every one delivered (`.delivered(duplicate: false)`): the tracker counts them without
    /// looking at each.
    package static func delivered(_ count: Int) -> BrokerOutcomes {
        var outcomes = BrokerOutcomes(count: count) { _ in .delivered(duplicate: false) }
        outcomes.allDelivered = true
        return outcomes
    }

    /// True when every outcome is known to be `.delivered(duplicate: false)` (`delivered(_:)`); false says nothing.
    package private(set) var allDelivered: Bool

    /// The outcomes of an array.
    package init(_ outcomes: [BrokerOutcome]) {
        self.init(count: outcomes.count) { outcomes[$0] }
    }

    /// 0.
    package var startIndex: Int { 0 }
    /// The number of outcomes.
    package let endIndex: Int

    /// The outcome of event `position`.
    package subscript(position: Int) -> BrokerOutcome { lookup(position) }
}
