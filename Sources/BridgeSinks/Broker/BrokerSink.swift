package import BridgeSystem
package import BridgeEvents

/// The connector of a broker sink (`type: kafka`, `type: jetstream`): hands events to a `BrokerClient` and
/// counts them delivered only on the broker's confirmation (docs/ARCHITECTURE.md, "Broker sinks").
///
/// * `accept` hands a batch to the client once fewer than `maxOutstanding` events wait for confirmation (the
///   sink's bounded buffer). When there is no room within a second, it throws a backpressure error: in activity
///   mode the sink waits at its cursor, in live mode the queue in front of it fills and drops. A batch larger than
///   the bound is taken whole: what does not fit waits in the sink and follows as confirmations free room.
/// * `makeDurable` returns once every accepted event is confirmed. While the broker makes no progress for
///   `stallAfter`, it throws a retriable error naming the client's problem (the sink runner logs it at error level,
///   backs off and, after its stuck threshold, makes `/readyz` answer 503 with that reason).
/// * An event that failed but can be delivered (a connection closed for good, a fatal producer error, a refused
///   credential) is sent again, before anything newer, on a new client when the old one broke; JetStream drops
///   the copy it already stored by its `Nats-Msg-Id`.
/// * An event the broker will never take (too large, an invalid topic or subject) becomes a dead letter
///   (`BrokerDeadLetters`), stored on the runner's thread before `makeDurable` returns: a crash before that sends
///   it again after the restart, as the cursor did not move. `tick` stores them too (live mode) and, every
///   `replayPoll`, hands the letters `dlq replay` gave back to the client; a replayed letter delivered leaves the
///   store, one refused again is a dead letter again.
/// * `close` waits up to `drainTimeout` for the confirmations, then closes the client.
///
/// The sink takes the encoded event bytes it is given (`EncodedEvent.body`), so an output format applies to it
/// like to every sink.
package final class BrokerSink: SinkConnector, @unchecked Sendable {
    // @unchecked: `client`, `waiting` and the resend schedule are used only by the sink's runner, one call at a
    // time and from one task (`SinkConnector`); the tracker is thread-safe.
    package let name: String
    private let open: () async throws(SinkError) -> any BrokerClient
    /// Run at each `connect` (every sink of the run is made by then); what it runs acts once per run by itself.
    private let connecting: () -> Void
    // Internal, not private: the dead letters' part (BrokerSink+DeadLetters.swift) uses these four, `waiting`,
    // `replayPollAt`, `replaysFailing` and `feed`.
    let settings: Settings
    let tracker: BrokerDeliveryTracker
    let deadLetters: any BrokerDeadLetters
    let metrics: BrokerSinkMetrics?
    let logger: Logger
    private var client: (any BrokerClient)?
    /// Accepted events not handed to the client yet (the rest of an oversized batch, events to send again).
    var waiting: ArraySlice<EncodedEvent> = []
    /// Between two resends of refused or unconfirmed events: 0.5 s doubling to 30 s, reset once nothing is in flight.
    private var resendBackoff = Backoff(initialDelay: .milliseconds(500), maxDelay: .seconds(30))
    private var resendAt = ContinuousClock.now
    /// When the store is next asked for replayed letters.
    var replayPollAt = ContinuousClock.now
    /// Whether the last look for replayed letters failed (logged once until one succeeds).
    var replaysFailing = false
    /// A line per dead letter, up to 10 in 10 s; the rest as a total (a broker refusing a stream of events).
    var deadLetterLog = LogBurstLimit()

    /// How the sink bounds and waits.
    package struct Settings: Sendable {
        /// Events handed over and not confirmed, at most.
        package var maxOutstanding: Int
        /// How long the broker may make no progress before `makeDurable` reports it.
        package var stallAfter: Duration
        /// How long `close` waits for confirmations.
        package var drainTimeout: Duration
        /// How long `accept` waits for room before it reports backpressure.
        package var roomWait: Duration = .seconds(1)
        /// How often the store is asked for letters `dlq replay` handed back (a webhook's poll interval).
        package var replayPoll: Duration = .seconds(1)
    }

    /// A sink named `name` whose clients `open` makes (it throws a retriable error while the broker cannot be
    /// reached), keeping what the broker refuses in `deadLetters`.
    package init(
        name: String,
        settings: Settings,
        tracker: BrokerDeliveryTracker,
        deadLetters: any BrokerDeadLetters,
        metrics: BrokerSinkMetrics?,
        logger: Logger,
        connecting: @escaping () -> Void = {},
        open: @escaping () async throws(SinkError) -> any BrokerClient
    ) {
        self.connecting = connecting
        self.name = name
        self.settings = settings
        self.tracker = tracker
        self.deadLetters = deadLetters
        self.metrics = metrics
        self.logger = logger
        self.open = open
    }

    /// The sink of `context`'s entry, with its metrics, its dead letters (where `context.state` keeps them) and a drain within the shutdown timeout (like the webhook sink's: most
    /// of it, the rest is margin for saving state).
    package static func make(
        name: String,
        context: SinkContext,
        maxOutstanding: Int,
        stallAfter: Duration,
        logger: Logger,
        open: @escaping () async throws(SinkError) -> any BrokerClient
    ) throws(RuntimeOutcome) -> BrokerSink {
        let outbox = try context.outbox(purpose: "dead letters")
        let deadLetters = context.state.brokerDeadLetters(sink: context.sinkID, outbox: outbox.store, logger: logger)
        let metrics = BrokerSinkMetrics(registry: context.registry, sink: context.sinkID)
        let tracker = BrokerDeliveryTracker(metrics: metrics)
        metrics.observeOutstanding { Double(tracker.pending) }
        let drainTimeout = context.shutdownTimeout - min(.seconds(1), context.shutdownTimeout / 5)
        return BrokerSink(
            name: name,
            settings: Settings(maxOutstanding: maxOutstanding, stallAfter: stallAfter, drainTimeout: drainTimeout),
            tracker: tracker, deadLetters: deadLetters, metrics: metrics, logger: logger,
            // Replayed letters of a sink no longer in bridge.yaml wait in the outbox: say so (once per run), as a
            // webhook sink does.
            connecting: { outbox.warnAboutLeftovers() }, open: open)
    }

    package func connect() async throws(SinkError) {
        connecting()
        _ = try await currentClient()
    }

    package func accept(_ events: [EncodedEvent]) async throws(SinkError) {
        guard !events.isEmpty else { return }
        defer { handOutcomesBack() }
        try await feed()
        if let reason = tracker.redoReason {
            // Events that failed go first: nothing newer is taken before them (per-item order).
            throw SinkError(sink: name, message: "events to send again: \(reason)", isRetriable: true)
        }
        // About to wait for room: nothing more comes meanwhile to fill the client's batches.
        if !waiting.isEmpty || tracker.pending + events.count > settings.maxOutstanding { client?.sendLingering() }
        guard waiting.isEmpty,
            tracker.waitForRoom(
                events.count, limit: settings.maxOutstanding, timeout: settings.roomWait, serving: client)
        else {
            let held = tracker.pending + waiting.count
            let problem = client?.problem
            throw SinkError(
                sink: name,
                message: "\(held) events wait for the broker (max_outstanding \(settings.maxOutstanding))"
                    + (problem.map { "; \($0)" } ?? ""),
                isRetriable: true,
                isBackpressure: problem == nil
            )
        }
        waiting = ArraySlice(events)
        try await feed()
    }

    package func makeDurable() async throws(SinkError) {
        defer { handOutcomesBack() }
        while true {
            try await feed()
            if waiting.isEmpty && tracker.pending == 0 {
                // What the broker refused is a dead letter before the cursor may move past it.
                try storeDeadLetters(now: .now)
                if let reason = tracker.redoReason {
                    throw SinkError(sink: name, message: "events to send again: \(reason)", isRetriable: true)
                }
                return
            }
            // Nothing more comes until these are confirmed: no use holding them back to fill a batch.
            client?.expedite()
            if !tracker.waitUntilSettled(stallAfter: settings.stallAfter, serving: client) {
                throw SinkError(sink: name, message: stalledMessage(), isRetriable: true)
            }
        }
    }

    /// Hands over what waits; reports a broker that stalls with events pending, or events that failed and wait to
    /// be sent again (so readiness shows it in live mode too).
    package func tick(now: ContinuousClock.Instant) async throws(SinkError) {
        defer { handOutcomesBack() }
        noteHealth()
        try await feed()
        try storeDeadLetters(now: now)
        try await takeReplays(now: now)
        if let reason = tracker.redoReason {
            throw SinkError(sink: name, message: "events to send again: \(reason)", isRetriable: true)
        }
        if tracker.isStalled(after: settings.stallAfter), client?.problem != nil {
            throw SinkError(sink: name, message: stalledMessage(), isRetriable: true)
        }
    }

    package func close() async throws(SinkError) {
        let deadline = ContinuousClock.now + settings.drainTimeout
        while ContinuousClock.now < deadline, !(waiting.isEmpty && tracker.pending == 0) {
            try? await feed()
            _ = tracker.waitUntilSettled(before: min(deadline, .now + .milliseconds(200)), serving: client)
        }
        let left = tracker.pending + waiting.count
        handOutcomesBack()
        await client?.close(drainTimeout: max(.zero, deadline - ContinuousClock.now))
        client = nil
        defer { deadLetterLog.finish { logDeadLettersHeldBack($0) } }
        do {
            try storeDeadLetters(now: .now)
        } catch {
            logger.error(
                "events the broker refused could not be stored as dead letters at shutdown (activity mode sends "
                    + "them again after a restart)",
                metadata: [LogKey.count: tracker.refusals.count, LogKey.error: error.message])
        }
        let unsent = left + tracker.takeRedo().count
        if unsent > 0 {
            logger.warning(
                "events not confirmed by the broker at shutdown (activity mode sends them again after a restart)",
                metadata: [LogKey.count: unsent]
            )
        }
    }

    // MARK: - Handing over

    /// The runner leaves the sink's call: a client that served its outcomes on the runner's thread
    /// (`BrokerClient.serveOutcomes`) serves them on its own again, while the runner waits for events.
    private func handOutcomesBack() { client?.handOutcomesBack() }

    private func stalledMessage() -> String {
        let reason = client?.problem ?? "no confirmation for \(settings.stallAfter.logText)"
        return "\(tracker.pending + waiting.count) events wait for the broker: \(reason)"
    }

    /// The client, opened anew when there is none or it broke (what the broken one held comes back to be sent
    /// again).
    private func currentClient() async throws(SinkError) -> any BrokerClient {
        if let client, !client.isBroken { return client }
        if let broken = client {
            logger.warning("broker client broken, opening a new one", metadata: [LogKey.error: broken.problem ?? ""])
            await broken.close(drainTimeout: .zero)
            client = nil
        }
        let opened: any BrokerClient
        do {
            opened = try await open()
        } catch {
            noteHealth()  // no client: not healthy
            throw error
        }
        client = opened
        metrics?.healthy.set(1)
        return opened
    }

    /// `directus_bridge_broker_healthy`: 1 while a client is open, reports no problem, and has not left events
    /// unconfirmed for the stall time. A broker that keeps its connections and answers nothing (a stopped process, a
    /// full disk it waits on) gives its client no problem to report: only the silence says it, as `makeDurable` does.
    /// Noted at every call of the runner (`feed`, `tick`): the runner ticks only between batches, and a failing streak
    /// retries one batch for as long as it fails, so a gauge set at ticks alone said 1 through a whole outage.
    private func noteHealth() {
        let healthy = client.map { $0.problem == nil } ?? false && !tracker.isStalled(after: settings.stallAfter)
        metrics?.healthy.set(healthy ? 1 : 0)
    }

    /// Sends again what failed (when its backoff is due), then hands waiting events to the client while it has
    /// room.
    func feed() async throws(SinkError) {
        let client = try await currentClient()
        noteHealth()
        if tracker.redoCount > 0, ContinuousClock.now >= resendAt {
            let reason = tracker.redoReason ?? ""
            let again = tracker.takeRedo()
            logger.error(
                "sending events again", metadata: [LogKey.count: again.count, LogKey.error: reason])
            metrics?.resent.increment(by: UInt64(again.count))
            waiting = ArraySlice(again) + waiting
            resendAt = .now + resendBackoff.nextDelay()
        } else if tracker.redoCount == 0 && tracker.pending == 0 && waiting.isEmpty {
            resendBackoff.reset()
        }
        while !waiting.isEmpty {
            let room = tracker.pending == 0 ? waiting.count : settings.maxOutstanding - tracker.pending
            guard room > 0 else { return }
            let batch = Array(waiting.prefix(min(room, settings.maxOutstanding)))
            let first = tracker.handOver(batch.count)
            let tracker = self.tracker
            do {
                try await client.submit(batch) { outcomes in tracker.finished(batch, first: first, outcomes: outcomes) }
            } catch {
                tracker.withdraw(batch.count)  // still in `waiting`: handed over again next time
                throw error
            }
            waiting.removeFirst(batch.count)
        }
    }
}
