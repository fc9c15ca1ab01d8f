package import BridgeSystem
package import BridgeEvents

/// The events a broker sink handed to its client and has not seen confirmed: how many, which must be sent again,
/// and when the broker last made progress. Outcomes arrive on the client's threads; the runner waits here.
package final class BrokerDeliveryTracker: Sendable {
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
    }

    private let state = ConditionLock(State())
    private let metrics: BrokerSinkMetrics?
    private let logger: Logger

    package init(metrics: BrokerSinkMetrics?, logger: Logger) {
        self.metrics = metrics
        self.logger = logger
    }

    /// Events handed over and not confirmed yet.
    package var pending: Int { state.withLock { $0.pending } }

    /// Events waiting to be sent again.
    package var redoCount: Int { state.withLock { $0.redo.count } }

    /// Why events wait to be sent again, when some do.
    package var redoReason: String? { state.withLock { $0.redo.isEmpty ? nil : $0.redoReason } }

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
    package func finished(_ events: [EncodedEvent], first: UInt64, outcomes: [BrokerOutcome]) {
        var delivered = 0
        var duplicates = 0
        var rejected: [(EncodedEvent, String)] = []
        state.withLock { state in
            for (index, event) in events.enumerated() {
                let outcome = index < outcomes.count ? outcomes[index] : .retry("no outcome reported")
                switch outcome {
                case .delivered(let duplicate):
                    delivered += 1
                    if duplicate { duplicates += 1 }
                case .rejected(let reason):
                    rejected.append((event, reason))
                case .retry(let reason):
                    state.redo.append((first + UInt64(index), event))
                    state.redoReason = reason
                }
            }
            state.pending -= events.count
            state.progressAt = .now
        }
        state.broadcast()
        metrics?.delivered.increment(by: UInt64(delivered))
        metrics?.duplicates.increment(by: UInt64(duplicates))
        metrics?.rejected.increment(by: UInt64(rejected.count))
        for (event, reason) in rejected {
            logger.error(
                "the broker refused an event for good; it is passed over",
                metadata: [
                    LogKey.eventID: event.id, LogKey.collection: event.collection, LogKey.error: reason,
                ]
            )
        }
    }

    /// Takes the events to send again, in the order they were first handed over.
    package func takeRedo() -> [EncodedEvent] {
        state.withLock { state in
            defer { state.redo.removeAll() }
            return state.redo.sorted { $0.order < $1.order }.map(\.event)
        }
    }

    /// Waits until at most `limit - count` events are pending (or none at all, for a batch larger than the
    /// limit), at most `timeout`; returns whether there is room.
    package func waitForRoom(_ count: Int, limit: Int, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        return state.wait { state in
            if state.pending == 0 || state.pending + count <= limit { return (true, nil) }
            let now = ContinuousClock.now
            return now >= deadline ? (false, nil) : (nil, deadline - now)
        }
    }

    /// Waits until nothing is pending; returns false once no outcome arrived for `stallAfter` (the broker is
    /// down or refusing) while some are still pending.
    package func waitUntilSettled(stallAfter: Duration) -> Bool {
        state.wait { state in
            if state.pending == 0 { return (true, nil) }
            let stallsAt = state.progressAt + stallAfter
            let now = ContinuousClock.now
            return now >= stallsAt ? (false, nil) : (nil, stallsAt - now)
        }
    }

    /// Waits until nothing is pending or `deadline` passed; returns whether nothing is pending.
    func waitUntilSettled(before deadline: ContinuousClock.Instant) -> Bool {
        state.wait { state in
            if state.pending == 0 { return (true, nil) }
            let now = ContinuousClock.now
            return now >= deadline ? (false, nil) : (nil, deadline - now)
        }
    }

    /// Whether events are pending and no outcome arrived for `stallAfter`.
    package func isStalled(after stallAfter: Duration) -> Bool {
        state.withLock { $0.pending > 0 && ContinuousClock.now - $0.progressAt >= stallAfter }
    }
}
