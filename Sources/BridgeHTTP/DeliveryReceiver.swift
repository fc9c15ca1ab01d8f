/// Where a `DeliveryEngine` reports finished requests (`submit(_:to:)`): many at once, once per turn of the
/// engine's driver, instead of resuming one waiting task per request.
///
/// Made for a caller that keeps many requests in flight from one loop (the webhook delivery service): one hand-over
/// per batch each way instead of a task, a continuation and a thread wake-up per request.
public final class DeliveryReceiver: Sendable {
    /// One finished request: the caller's tag and the response, or why there is none (`.cancelled` after
    /// `DeliveryEngine.cancelAll(of:)` or at shutdown).
    public struct Completion: Sendable {
        /// The tag given with the request.
        public var tag: Int64
        /// The final response or the error.
        public var result: Result<HTTPResponse, HTTPClientError>
        /// Whether the request was started; false when it was cancelled or refused while it waited for a slot.
        public var sent: Bool

        /// Creates a completion (engines make them; a caller only reads them).
        public init(tag: Int64, result: Result<HTTPResponse, HTTPClientError>, sent: Bool) {
            self.tag = tag
            self.result = result
            self.sent = sent
        }
    }

    private let handler: @Sendable ([Completion]) -> Void

    /// Creates a receiver; `handler` runs on the engine's driver thread and must return quickly (hand the batch
    /// over, do not work on it there).
    public init(_ handler: @escaping @Sendable ([Completion]) -> Void) {
        self.handler = handler
    }

    /// Hands `completions` to the handler; called by engines, on their own thread, never under a lock the
    /// handler could need.
    package func deliver(_ completions: [Completion]) {
        handler(completions)
    }
}

/// Answers delivery jobs: each receiver's outcomes collected and handed over in one call by `flush()` — the one
/// place that turns an outcome into a reply, for the driver and for refused submissions.
///
/// A list searched by identity, not a dictionary: an engine has one receiver per sending loop (a webhook sink's
/// engine has one), and the lists are kept from one flush to the next instead of being allocated again each turn.
struct DeliveryAnswers {
    /// The first `used` hold this turn's outcomes; the rest keep their lists' capacity, and no receiver.
    private var batches: [(receiver: DeliveryReceiver?, completions: [DeliveryReceiver.Completion])] = []
    private var used = 0

    /// Answers the job `tag` of `receiver`; `sent`: the transfer was started (a job cancelled or refused while it
    /// waited never was).
    mutating func answer(
        _ receiver: DeliveryReceiver, _ tag: Int64, _ result: Result<HTTPResponse, HTTPClientError>, sent: Bool
    ) {
        let completion = DeliveryReceiver.Completion(tag: tag, result: result, sent: sent)
        for index in 0..<used where batches[index].receiver === receiver {
            batches[index].completions.append(completion)
            return
        }
        if used < batches.count {
            batches[used].receiver = receiver
        } else {
            batches.append((receiver, []))
        }
        batches[used].completions.append(completion)
        used += 1
    }

    /// Hands each receiver the outcomes collected since the last flush.
    mutating func flush() {
        guard used > 0 else { return }
        for index in 0..<used {
            batches[index].receiver?.deliver(batches[index].completions)
            batches[index].receiver = nil
            batches[index].completions.removeAll(keepingCapacity: true)
        }
        used = 0
    }
}
