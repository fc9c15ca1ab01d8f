package import BridgeEvents
internal import BridgeSystem

/// The events a broker sink handed to its client and has not seen confirmed: how many, which must be sent again,
/// which the broker refused for good (to be stored as dead letters by the runner), which replayed dead letters were
/// delivered, and when the broker last made progress. Outcomes arrive on the client's threads; the runner waits
/// here, and does the blocking work (storing letters) on its own thread.
package final class BrokerDeliveryTracker: Sendable {
    /// An event the broker refused for good, not stored as a dead letter yet.
    package struct Refusal: Sendable {
        /// The event.
        package var event: EncodedEvent
        /// The broker's reason.
        package var reason: String
        /// The replayed dead letter the event was sent from, if it was one.
        package var replay: DeadLetter?
    }

    private struct State {
        /// Handed to a client, no outcome yet.
        package var pending = 0
        /// Not delivered and to be sent again, with the order in which they were first handed over.
        package var redo: [(order: UInt64, event: EncodedEvent)] = []
        /// Why the last of `redo` failed.
        package var redoReason = ""
        /// The order number of the next event handed over.
        package var nextOrder: UInt64 = 0
        /// When the last outcome arrived (or the last hand-over, while none is pending).
        package var progressAt = ContinuousClock.now
        /// Refused for good, oldest first; they leave only once stored (`dropRefusals`).
        package var refused: [Refusal] = []
        /// Replayed dead letters handed over and not delivered or refused yet, by event id.
        package var replays: [String: DeadLetter] = [:]
        /// Replayed dead letters the broker confirmed, not removed from the store yet.
        package var deliveredReplays: [DeadLetter] = []
    }

    private let state = ConditionLock(State())
    private let metrics: BrokerSinkMetrics?

    /// A tracker counting outcomes in `metrics`.
    package init(metrics: BrokerSinkMetrics?) {
        self.metrics = metrics
    }

    /// Events handed over and not confirmed yet.
    package var pending: Int { state.withLock { $0.pending } }

    /// Events waiting to be sent again.
    package var redoCount: Int { state.withLock { $0.redo.count } }

    /// Why events wait to be sent again, when some do.
    package var redoReason: String? { state.withLock { $0.redo.isEmpty ? nil : $0.redoReason } }

    /// Events refused for good and not stored as dead letters yet, oldest first.
    package var refusals: [Refusal] { state.withLock { $0.refused } }

    /// Forgets the oldest `count` refusals (they are stored now).
    package func dropRefusals(_ count: Int) { state.withLock { $0.refused.removeFirst(min(count, $0.refused.count)) } }

    /// Replayed dead letters delivered and not removed from the store yet.
    package var deliveredReplays: [DeadLetter] { state.withLock { $0.deliveredReplays } }

    /// Forgets the oldest `count` delivered replays (removed from the store now).
    package func dropDeliveredReplays(_ count: Int) {
        state.withLock { $0.deliveredReplays.removeFirst(min(count, $0.deliveredReplays.count)) }
    }

    /// Notes that `letters` (replayed dead letters) are about to be handed over: their outcome is reported by
    /// `deliveredReplays` or with their refusal.
    package func watch(_ letters: [DeadLetter]) {
        state.withLock { state in
            for letter in letters { state.replays[letter.eventID] = letter }
        }
    }

    /// Records that `count` events are about to be handed over; returns the order number of the first.
    package func handOver(_ count: Int) -> UInt64 {
        state.withLock { state in
            if state.pending == 0 { state.progressAt = .now }
            state.pending += count
            defer { state.nextOrder += UInt64(count) }
            return state.nextOrder
        }
    }

    /// Takes back a hand-over of `count` events that the client refused before holding any of them.
    package func withdraw(_ count: Int) {
        state.withLock { $0.pending -= count }
        state.broadcast()
    }

    /// Records the outcomes of `events`, handed over from order number `first` (on the client's thread).
    package func finished(_ events: [EncodedEvent], first: UInt64, outcomes: BrokerOutcomes) {
        var delivered = 0
        var duplicates = 0
        var rejected = 0
        state.withLock { state in
            // The usual batch: every event delivered, none a replayed letter. Nothing to look at per event.
            let allDelivered = outcomes.allDelivered && outcomes.count == events.count && state.replays.isEmpty
            if allDelivered { delivered = events.count }
            for index in events.indices where !allDelivered {
                let outcome = index < outcomes.count ? outcomes[index] : .retry("no outcome reported")
                switch outcome {
                case .delivered(let duplicate):
                    delivered += 1
                    if duplicate { duplicates += 1 }
                    if !state.replays.isEmpty, let replay = state.replays.removeValue(forKey: events[index].id) {
                        state.deliveredReplays.append(replay)
                    }
                case .rejected(let reason):
                    rejected += 1
                    let replay = state.replays.isEmpty ? nil : state.replays.removeValue(forKey: events[index].id)
                    state.refused.append(Refusal(event: events[index], reason: reason, replay: replay))
                case .retry(let reason):
                    state.redo.append((first + UInt64(index), events[index]))
                    state.redoReason = reason
                }
            }
            state.pending -= events.count
            state.progressAt = .now
        }
        state.broadcast()
        metrics?.delivered.increment(by: UInt64(delivered))
        metrics?.duplicates.increment(by: UInt64(duplicates))
        metrics?.rejected.increment(by: UInt64(rejected))
    }

    /// Takes the events to send again, in the order they were first handed over.
    package func takeRedo() -> [EncodedEvent] {
        state.withLock { state in
            defer { state.redo.removeAll() }
            return state.redo.sorted { $0.order < $1.order }.map(\.event)
        }
    }

    /// Waits until at most `limit - count` events are pending (or none at all, for a batch larger than the
    /// limit), at most `timeout`, serving `client`'s outcomes meanwhile if it serves them on the runner's thread;
    /// returns whether there is room.
    package func waitForRoom(_ count: Int, limit: Int, timeout: Duration, serving client: (any BrokerClient)?)
        -> Bool
    {
        let deadline = ContinuousClock.now + timeout
        return wait(serving: client) { state in
            if state.pending == 0 || state.pending + count <= limit { return (true, nil) }
            let now = ContinuousClock.now
            return now >= deadline ? (false, nil) : (nil, deadline - now)
        }
    }

    /// Waits until nothing is pending, serving `client`'s outcomes as `waitForRoom` does; returns false once no
    /// outcome arrived for `stallAfter` (the broker is down or refusing) while some are still pending.
    package func waitUntilSettled(stallAfter: Duration, serving client: (any BrokerClient)?) -> Bool {
        wait(serving: client) { state in
            if state.pending == 0 { return (true, nil) }
            let stallsAt = state.progressAt + stallAfter
            let now = ContinuousClock.now
            return now >= stallsAt ? (false, nil) : (nil, stallsAt - now)
        }
    }

    /// Waits until nothing is pending or `deadline` passed, serving `client`'s outcomes as `waitForRoom` does;
    /// returns whether nothing is pending.
    func waitUntilSettled(before deadline: ContinuousClock.Instant, serving client: (any BrokerClient)?) -> Bool {
        wait(serving: client) { state in
            if state.pending == 0 { return (true, nil) }
            let now = ContinuousClock.now
            return now >= deadline ? (false, nil) : (nil, deadline - now)
        }
    }

    /// Runs `body` with the state locked until it gives a result; meanwhile, for as long as `body` says, serves
    /// `client`'s outcomes on this thread when the client serves them there (`BrokerClient.serveOutcomes`, outside
    /// the lock: their completions take it), or else waits on the condition for the client's threads to record them.
    private func wait<T>(
        serving client: (any BrokerClient)?,
        _ body: (inout State) -> (result: T?, sleep: Duration?)
    ) -> T {
        if let client {
            while true {
                let (result, sleep) = state.withLock { body(&$0) }
                if let result { return result }
                guard client.serveOutcomes(waitingAtMost: sleep) else { break }
            }
        }
        return state.wait(body)
    }

    /// Whether events are pending and no outcome arrived for `stallAfter`.
    package func isStalled(after stallAfter: Duration) -> Bool {
        state.withLock { $0.pending > 0 && ContinuousClock.now - $0.progressAt >= stallAfter }
    }
}
