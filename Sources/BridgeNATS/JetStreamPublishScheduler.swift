internal import BridgeSystem

/// Decides which JetStream messages to publish, when (sans-IO): per-key order, a bound on held messages, retries
/// with backoff, one completion per submitted batch.
///
/// A message is published when it is the oldest unfinished message of its ordering key. A retriable failure
/// puts it back, as the head of its key, after a backoff delay; a final outcome (acknowledged, or a failure that
/// retrying cannot fix) releases the key's next message. The driver (`JetStreamPublisherCore`) calls these
/// methods under its lock and performs the returned work after releasing it.
struct JetStreamPublishScheduler {
    /// A batch whose every message has its outcome: call `completion(outcomes)`.
    struct Completion {
        let completion: @Sendable ([JetStreamOutcome]) -> Void
        let outcomes: [JetStreamOutcome]
    }

    private struct Held {
        var message: JetStreamMessage
        var batch: Int
        var index: Int
        var key: Int?
        var backoff: Backoff
        var retryAt: ContinuousClock.Instant?
    }

    private struct Batch {
        var outcomes: [JetStreamOutcome?]
        var remaining: Int
        let completion: @Sendable ([JetStreamOutcome]) -> Void

        /// Stores the outcome of `index` (once) and returns how many are still missing; nil if already stored.
        mutating func record(_ outcome: JetStreamOutcome, at index: Int) -> Int? {
            guard outcomes[index] == nil else { return nil }
            outcomes[index] = outcome
            remaining -= 1
            return remaining
        }
    }

    let limit: Int
    private let retryDelay: Duration
    private let maxRetryDelay: Duration
    private var held: [Int: Held] = [:]
    private var nextSlot = 0
    private var keyQueues: [Int: [Int]] = [:]
    private var ready: [Int] = []
    private var readyHead = 0
    private var retrying: Set<Int> = []
    /// Published and not yet answered: the slot, and when it was published (for the acknowledgement deadline).
    private var tokens: [UInt: (slot: Int, sentAt: ContinuousClock.Instant)] = [:]
    private var batches: [Int: Batch] = [:]
    private var nextBatch = 0
    /// Once closing, retriable failures finish as failures instead of being retried.
    private(set) var closing = false
    /// The last retriable error the server answered a publish with (a full stream, a stream without a leader), until
    /// a publish is acknowledged: what the sink names while events wait. Unanswered publishes do not set it.
    private(set) var lastRefusal: NATSError?

    init(limit: Int, retryDelay: Duration, maxRetryDelay: Duration) {
        self.limit = max(1, limit)
        self.retryDelay = retryDelay
        self.maxRetryDelay = maxRetryDelay
    }

    /// Messages held: submitted and not finished.
    var heldCount: Int { held.count }
    /// Messages published and not yet answered.
    var inFlightCount: Int { tokens.count }
    /// Free places below the bound.
    var room: Int { max(0, limit - held.count) }

    // MARK: - Batches and messages

    /// Opens a batch of `count` messages; an empty batch completes at once.
    mutating func openBatch(count: Int, completion: @escaping @Sendable ([JetStreamOutcome]) -> Void) -> (
        Int, Completion?
    ) {
        let id = nextBatch
        nextBatch += 1
        guard count > 0 else { return (id, Completion(completion: completion, outcomes: [])) }
        batches[id] = Batch(outcomes: Array(repeating: nil, count: count), remaining: count, completion: completion)
        return (id, nil)
    }

    /// Adds message `index` of `batch` (the caller keeps within `room`).
    mutating func add(_ message: JetStreamMessage, batch: Int, index: Int) {
        let slot = nextSlot
        nextSlot += 1
        let key = message.orderingKey?.hashValue  // equal keys, equal hashes; a collision only serializes two items
        held[slot] = Held(
            message: message,
            batch: batch,
            index: index,
            key: key,
            backoff: Backoff(initialDelay: retryDelay, maxDelay: maxRetryDelay),
            retryAt: nil
        )
        guard let key else {
            ready.append(slot)
            return
        }
        keyQueues[key, default: []].append(slot)
        if keyQueues[key]?.count == 1 { ready.append(slot) }
    }

    /// Records an outcome for a message never added (cancelled before it was handed over).
    mutating func finishUnsent(batch: Int, index: Int, error: NATSError) -> Completion? {
        record(.failed(error), batch: batch, index: index)
    }

    // MARK: - Publishing

    /// Up to `maximum` messages to publish now (due retries first become ready), in the order they became ready.
    mutating func takeReady(now: ContinuousClock.Instant, maximum: Int) -> [(slot: Int, message: JetStreamMessage)] {
        for slot in retrying.sorted() where held[slot]?.retryAt.map({ $0 <= now }) ?? true {
            retrying.remove(slot)
            held[slot]?.retryAt = nil
            ready.append(slot)
        }
        var taken: [(slot: Int, message: JetStreamMessage)] = []
        while taken.count < maximum && readyHead < ready.count {
            let slot = ready[readyHead]
            readyHead += 1
            if let message = held[slot]?.message { taken.append((slot, message)) }
        }
        if readyHead == ready.count {
            ready.removeAll(keepingCapacity: true)
            readyHead = 0
        }
        return taken
    }

    /// Whether messages are waiting to be published now.
    var hasReady: Bool { readyHead < ready.count }

    /// Messages waiting for their retry.
    var retryCount: Int { retrying.count }

    /// When the next retry is due, if one waits.
    var nextRetry: ContinuousClock.Instant? { retrying.compactMap { held[$0]?.retryAt }.min() }

    /// Message `slot` is published as `token` (its reply subject's last token) at `now`: answers come back by
    /// token.
    mutating func published(slot: Int, token: UInt, now: ContinuousClock.Instant) {
        tokens[token] = (slot, now)
    }

    /// The answer for `token`; unknown tokens (an answer after a take-back at close) are ignored.
    mutating func answered(token: UInt, _ outcome: JetStreamOutcome, now: ContinuousClock.Instant) -> Completion? {
        guard let entry = tokens.removeValue(forKey: token) else { return nil }
        switch outcome {
        case .acknowledged: lastRefusal = nil
        case .failed(let error) where error.isRetriable: lastRefusal = error
        case .failed: break  // one message refused for good (a dead letter) says nothing about the next
        }
        return finish(slot: entry.slot, outcome, now: now)
    }

    /// Message `slot` could not be handed over (`token` nil) or its answer was taken back (`token` set).
    mutating func publishFailed(slot: Int, token: UInt?, error: NATSError, now: ContinuousClock.Instant) -> Completion?
    {
        if let token { tokens.removeValue(forKey: token) }
        return finish(slot: slot, .failed(error), now: now)
    }

    /// The slots published and not answered, by token (to fail at close).
    var inFlight: [UInt: Int] { tokens.mapValues(\.slot) }

    /// Every publish made at or before `cutoff` and still unanswered fails with `error` (a retriable one comes back
    /// after its backoff, under a new token: a late answer to the old one is ignored).
    mutating func timeOut(sentBefore cutoff: ContinuousClock.Instant, error: NATSError, now: ContinuousClock.Instant)
        -> [Completion]
    {
        let expired = tokens.filter { $0.value.sentAt <= cutoff }
        var completions: [Completion] = []
        for (token, entry) in expired.sorted(by: { $0.value.slot < $1.value.slot }) {
            tokens.removeValue(forKey: token)
            finish(slot: entry.slot, .failed(error), now: now).map { completions.append($0) }
        }
        return completions
    }

    private mutating func finish(slot: Int, _ outcome: JetStreamOutcome, now: ContinuousClock.Instant) -> Completion? {
        // Taken out (not copied) on the common path: a copy retains every string of the message.
        guard var entry = held.removeValue(forKey: slot) else { return nil }
        if case .failed(let error) = outcome, error.isRetriable, !closing {
            entry.retryAt = now + entry.backoff.nextDelay()
            held[slot] = entry
            retrying.insert(slot)
            return nil
        }
        if let key = entry.key, let position = keyQueues[key]?.firstIndex(of: slot) {
            keyQueues[key]?.remove(at: position)  // in place, like the batches below
            if let next = keyQueues[key]?.first {
                // Only a head is ever published; the next one's turn comes when the head finished.
                if position == 0 && !closing { ready.append(next) }
            } else {
                keyQueues.removeValue(forKey: key)
            }
        }
        return record(outcome, batch: entry.batch, index: entry.index)
    }

    private mutating func record(_ outcome: JetStreamOutcome, batch: Int, index: Int) -> Completion? {
        // Changed in place (optional chaining through the dictionary's subscript): copying the batch out and back
        // would copy its whole outcome array for every message.
        guard batches[batch]?.record(outcome, at: index) == 0, let entry = batches.removeValue(forKey: batch) else {
            return nil
        }
        return Completion(completion: entry.completion, outcomes: entry.outcomes.map { $0! })
    }

    // MARK: - Closing

    /// Stops retrying; every held message not in flight fails with `error` (in-flight ones finish when answered
    /// or taken back).
    mutating func close(error: NATSError) -> [Completion] {
        closing = true
        let inFlightSlots = Set(tokens.values.map(\.slot))
        var completions: [Completion] = []
        for slot in held.keys.sorted() where !inFlightSlots.contains(slot) {
            if let completion = finish(slot: slot, .failed(error), now: .now) { completions.append(completion) }
        }
        ready.removeAll()
        readyHead = 0
        retrying.removeAll()
        return completions
    }
}
