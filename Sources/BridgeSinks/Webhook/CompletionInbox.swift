package import BridgeHTTP
internal import Synchronization

/// Finished engine attempts on their way to the delivery loop, and the rule for when they ring it.
///
/// The engine's driver hands answers over once per turn, on its own thread. Ringing a sleeping loop costs the driver
/// a futex wake, and the woken loop takes a core from the driver or the receiver right when they are busiest
/// (BENCHMARKS.md, "Webhook @8: the loop rung once per batch of answers"). So while enough attempts are outstanding
/// that the engine cannot run dry, plain successes are held and the loop is rung once per batch of them:
/// - any answer that is not a sent 2xx rings at once (a failing receiver stops the queued attempts promptly);
/// - so does every answer once no more than `lowWater` attempts are outstanding (the engine needs its next ones;
///   at a low rate this is every answer, so nothing waits);
/// - held answers ring once `batch` of them wait, or once the oldest waited `holdLimit` (checked whenever the engine
///   answers again).
/// If the engine answers nothing more (every other attempt hangs), held answers wait for the loop's next turn for
/// another reason, at the latest its poll (`WebhookDeliveryService.Settings.pollInterval`). Holding only delays
/// when an outcome is seen, never what it is: the outbox is write-ahead.
package final class CompletionInbox: Sendable {
    private struct State {
        var answers: [DeliveryReceiver.Completion] = []
        /// Attempts handed to the engine and not answered yet.
        var outstanding = 0
        /// When the oldest answer waiting unrung arrived.
        var heldSince: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    /// Answers held before they ring.
    package let batch: Int
    /// Outstanding attempts at or below which every answer rings.
    package let lowWater: Int
    /// Longest an answer is held while the engine keeps answering.
    package let holdLimit: Duration

    /// Creates an empty inbox.
    package init(batch: Int, lowWater: Int, holdLimit: Duration) {
        self.batch = batch
        self.lowWater = lowWater
        self.holdLimit = holdLimit
    }

    /// `count` attempts were handed to the engine (before it can answer them).
    package func submitted(_ count: Int) {
        state.withLock { $0.outstanding += count }
    }

    /// The engine answered `completions` at `now`; returns whether the loop must be rung for them.
    package func answered(_ completions: [DeliveryReceiver.Completion], now: ContinuousClock.Instant) -> Bool {
        state.withLock { state in
            state.answers.append(contentsOf: completions)
            state.outstanding -= completions.count
            let ring =
                state.outstanding <= lowWater || state.answers.count >= batch
                || state.heldSince.map { now - $0 >= holdLimit } ?? false
                || completions.contains { !$0.isSentSuccess }
            state.heldSince = ring ? nil : state.heldSince ?? now
            return ring
        }
    }

    /// Swaps the waiting answers into `list` (which must be empty; its capacity is kept for the next answers).
    package func take(into list: inout [DeliveryReceiver.Completion]) {
        state.withLock { state in
            swap(&state.answers, &list)
            state.heldSince = nil
        }
    }

    /// Whether answers wait that the loop has not taken.
    package var isHolding: Bool { state.withLock { !$0.answers.isEmpty } }
}

extension DeliveryReceiver.Completion {
    /// A request that was sent and answered 2xx: the one outcome that may wait for a batch.
    fileprivate var isSentSuccess: Bool {
        guard sent, case .success(let response) = result else { return false }
        return (200...299).contains(response.status)
    }
}
