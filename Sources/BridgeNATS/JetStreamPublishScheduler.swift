internal import BridgeSystem

/// Decides which JetStream messages to publish, when (sans-IO): per-key order, a bound on held messages, retries
/// with backoff, one completion per submitted batch.
///
/// A message is published when it is the oldest unfinished message of its ordering key. A retriable failure
/// puts it back, as the head of its key, after a backoff delay; a final outcome (acknowledged, or a failure that
/// retrying cannot fix) releases the key's next message. The driver (`JetStreamPublisherCore`) calls these
/// methods under its lock and performs the returned work after releasing it.
///
/// Held messages live in slots of an array, reused once finished, and a publish's token names its slot: an answer
/// and a key's next message are found without hashing (BENCHMARKS.md, "Issue 26, item 6: the JetStream scheduler
/// in slots, and released messages published by the reply thread").
struct JetStreamPublishScheduler {
    /// A batch whose every message has its outcome: call `completion(outcomes)`.
    struct Completion {
        let completion: @Sendable ([JetStreamOutcome]) -> Void
        let outcomes: [JetStreamOutcome]
    }

    /// What the scheduler knows of a held message besides the message itself: plain values only, so that reading
    /// or changing a slot retains nothing (the messages are in `messages`, beside).
    private struct Slot {
        var held = false
        var batch = 0
        var index = 0
        /// Submission order (slots are reused): retries, time-outs and closing go through messages in it.
        var order = 0
        var key: Int?
        /// The unfinished messages of one key form a queue linked through their slots, oldest first.
        var previousOfKey: Int?
        var nextOfKey: Int?
        var backoff: Backoff
        /// Times as durations since `origin`: `ContinuousClock.Instant` is not of fixed layout outside the standard
        /// library, and a field of it would make every copy and check of a slot a call through its type's metadata.
        var retryAt: Duration?
        /// The token of its publish in flight, 0 when none is.
        var token: UInt = 0
        var sentAt = Duration.zero
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

    /// A token is `publish number << slotBits | slot`: never 0 (publishes are numbered from 1), never repeated,
    /// and an answer names its slot. `limit` is at most 2²⁰ (`JetStreamPublisher.make` allows 1,000,000).
    static let slotBits = 20

    let limit: Int
    private let retryDelay: Duration
    private let maxRetryDelay: Duration
    private let origin = ContinuousClock.now
    private var slots: [Slot] = []
    /// The message of each held slot, nil in a free one.
    private var messages: [JetStreamMessage?] = []
    private var freeSlots: [Int] = []
    private var nextOrder = 0
    private var nextPublish: UInt = 1
    /// The newest unfinished message of each key, by the key's hash.
    private var keyTails: [Int: Int] = [:]
    private var ready: [Int] = []
    private var readyHead = 0
    private var retrying: Set<Int> = []
    private var batches: [Int: Batch] = [:]
    private var nextBatch = 0
    /// Once closing, retriable failures finish as failures instead of being retried.
    private(set) var closing = false
    /// The last retriable error the server answered a publish with (a full stream, a stream without a leader), until
    /// a publish is acknowledged: what the sink names while events wait. Unanswered publishes do not set it.
    private(set) var lastRefusal: NATSError?
    /// Messages held: submitted and not finished.
    private(set) var heldCount = 0
    /// Messages published and not yet answered.
    private(set) var inFlightCount = 0

    init(limit: Int, retryDelay: Duration, maxRetryDelay: Duration) {
        precondition(limit <= 1 << Self.slotBits, "a token names at most 2^20 slots")
        self.limit = max(1, limit)
        self.retryDelay = retryDelay
        self.maxRetryDelay = maxRetryDelay
    }

    /// Free places below the bound.
    var room: Int { max(0, limit - heldCount) }

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
        let slot = freeSlots.popLast() ?? slots.count
        let key = message.orderingKey?.hashValue  // equal keys, equal hashes; a collision only serializes two items
        // The key's newest message, if any, is this one's predecessor: it waits until that one finished.
        let previous = key.flatMap { keyTails.updateValue(slot, forKey: $0) }
        let entry = Slot(
            held: true,
            batch: batch,
            index: index,
            order: nextOrder,
            key: key,
            previousOfKey: previous,
            backoff: Backoff(initialDelay: retryDelay, maxDelay: maxRetryDelay)
        )
        nextOrder += 1
        heldCount += 1
        if slot == slots.count {
            slots.append(entry)
            messages.append(message)
        } else {
            slots[slot] = entry
            messages[slot] = message
        }
        if let previous {
            slots[previous].nextOfKey = slot
        } else {
            ready.append(slot)
        }
    }

    /// Records an outcome for a message never added (cancelled before it was handed over).
    mutating func finishUnsent(batch: Int, index: Int, error: NATSError) -> Completion? {
        record(.failed(error), batch: batch, index: index)
    }

    // MARK: - Publishing

    /// Up to `maximum` messages to publish now (due retries first become ready), in the order they became ready.
    mutating func takeReady(now: ContinuousClock.Instant, maximum: Int) -> [(slot: Int, message: JetStreamMessage)] {
        if !retrying.isEmpty {
            let now = now - origin
            for slot in inOrder(retrying) where slots[slot].retryAt.map({ $0 <= now }) ?? true {
                retrying.remove(slot)
                slots[slot].retryAt = nil
                ready.append(slot)
            }
        }
        var taken: [(slot: Int, message: JetStreamMessage)] = []
        while taken.count < maximum && readyHead < ready.count {
            let slot = ready[readyHead]
            readyHead += 1
            // A slot is ready until taken: nothing finishes it meanwhile (`close` empties this queue).
            if let message = messages[slot] { taken.append((slot, message)) }
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
    var nextRetry: ContinuousClock.Instant? { retrying.compactMap { slots[$0].retryAt }.min().map { origin + $0 } }

    /// Message `slot` is published at `now`: the token of its reply subject, by which its answer comes back.
    mutating func published(slot: Int, now: ContinuousClock.Instant) -> UInt {
        let token = nextPublish << Self.slotBits | UInt(slot)
        nextPublish += 1
        if slots[slot].token == 0 { inFlightCount += 1 }
        slots[slot].token = token
        slots[slot].sentAt = now - origin
        return token
    }

    /// The answer for `token`; unknown tokens (an answer after a time-out or a take-back at close) are ignored.
    mutating func answered(token: UInt, _ outcome: JetStreamOutcome, now: ContinuousClock.Instant) -> Completion? {
        guard let slot = landed(token) else { return nil }
        switch outcome {
        case .acknowledged: lastRefusal = nil
        case .failed(let error) where error.isRetriable: lastRefusal = error
        case .failed: break  // one message refused for good (a dead letter) says nothing about the next
        }
        return finish(slot: slot, outcome, now: now)
    }

    /// The publish `token` could not be handed over, or its answer was taken back (at close); a token no longer in
    /// flight (timed out meanwhile) is ignored.
    mutating func publishFailed(token: UInt, error: NATSError, now: ContinuousClock.Instant) -> Completion? {
        guard let slot = landed(token) else { return nil }
        return finish(slot: slot, .failed(error), now: now)
    }

    /// The tokens published and not answered (to fail at close).
    var inFlight: [UInt] { slots.compactMap { $0.token == 0 ? nil : $0.token } }

    /// Every publish made at or before `cutoff` and still unanswered fails with `error` (a retriable one comes back
    /// after its backoff, under a new token: a late answer to the old one is ignored).
    mutating func timeOut(sentBefore cutoff: ContinuousClock.Instant, error: NATSError, now: ContinuousClock.Instant)
        -> [Completion]
    {
        let cutoff = cutoff - origin
        let expired = slots.indices.filter { slots[$0].token != 0 && slots[$0].sentAt <= cutoff }
        var completions: [Completion] = []
        for slot in inOrder(expired) {
            if let slot = landed(slots[slot].token) {
                finish(slot: slot, .failed(error), now: now).map { completions.append($0) }
            }
        }
        return completions
    }

    /// The slot of the publish `token` if it is in flight, which it no longer is.
    private mutating func landed(_ token: UInt) -> Int? {
        let slot = Int(token & (1 << Self.slotBits - 1))
        guard slot < slots.count, token != 0, slots[slot].token == token else { return nil }
        slots[slot].token = 0
        inFlightCount -= 1
        return slot
    }

    /// `slots` in submission order.
    private func inOrder(_ chosen: some Sequence<Int>) -> [Int] {
        chosen.sorted { slots[$0].order < slots[$1].order }
    }

    private mutating func finish(slot: Int, _ outcome: JetStreamOutcome, now: ContinuousClock.Instant) -> Completion? {
        guard slots[slot].held else { return nil }
        if case .failed(let error) = outcome, error.isRetriable, !closing {
            let retryAt = now - origin + slots[slot].backoff.nextDelay()
            slots[slot].retryAt = retryAt
            retrying.insert(slot)
            return nil
        }
        let entry = slots[slot]
        slots[slot].held = false
        messages[slot] = nil
        freeSlots.append(slot)
        heldCount -= 1
        if let previous = entry.previousOfKey { slots[previous].nextOfKey = entry.nextOfKey }
        if let next = entry.nextOfKey {
            slots[next].previousOfKey = entry.previousOfKey
            // Only a head is ever published; the next one's turn comes when the head finished.
            if entry.previousOfKey == nil && !closing { ready.append(next) }
        } else if let key = entry.key {
            if let previous = entry.previousOfKey {
                keyTails[key] = previous  // only at close: a message behind its key's head finished
            } else {
                keyTails.removeValue(forKey: key)
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
        let waiting = slots.indices.filter { slots[$0].held && slots[$0].token == 0 }
        var completions: [Completion] = []
        for slot in inOrder(waiting) {
            if let completion = finish(slot: slot, .failed(error), now: .now) { completions.append(completion) }
        }
        ready.removeAll()
        readyHead = 0
        retrying.removeAll()
        return completions
    }
}
