internal import BridgeEvents

/// How one attempt ended, as the delivery service saw it.
package enum AttemptOutcome: Sendable, Equatable {
    /// The receiver answered: status, its `Retry-After` delay, and the first KiB of the body.
    case response(status: Int, retryAfter: Duration?, body: [UInt8])
    /// No usable answer (connection failure, timeout, HTTP/2 stream error): always retried.
    case failure(String)
    /// The attempt was abandoned by the bridge (shutdown): it does not count, the row stays as it was.
    case cancelled
}

/// What the delivery service does after an attempt: the outbox change and what to report.
package struct AttemptConclusion: Sendable, Equatable {
    /// The retry policy's decision (nil for a cancelled attempt).
    package var decision: RetryPolicy.Decision?
    /// The outbox change to write (nil for a cancelled attempt).
    package var write: OutboxWrite?
    /// The attempt's number (1-based).
    package var attempt: Int
    /// When the event entered the outbox (Unix ms), for the delivery latency.
    package var createdAt: Int64
    /// The row's ordering group: the hash of `collection` + NUL + `key` (`DeliveryScheduler.Entry.itemHash`).
    package var itemHash: Int64
}

/// The delivery service's bookkeeping for one sink, without I/O: which outbox rows are known, which may be
/// attempted now (per-item order via `DeliveryScheduler`), and what an attempt's outcome means for the row
/// (`RetryPolicy`). Times are Unix milliseconds.
package struct WebhookDeliveryState: Sendable {
    private struct Row: Sendable {
        package var entry: DeliveryScheduler.Entry
        package var attempts: Int
        package var createdAt: Int64
        /// The id and body when intake handed them over in memory; nil for a row read from SQLite, whose payload
        /// is read there when it is due.
        package var payload: OutboxPayload?
    }

    /// The retry policy.
    package let policy: RetryPolicy
    private var scheduler = DeliveryScheduler()
    private var rows: [Int64: Row] = [:]
    private var running: Set<Int64> = []
    /// Payloads intake handed over for rows not read yet while delivery reads rows by `seq` order (at start, after a
    /// refused batch): each row takes its payload when the read reaches it (`load`).
    private var aside: [Int64: OutboxPayload] = [:]
    /// Bytes of the payloads kept, with rows or aside (`OutboxHandOff.cost`), for the hand-off's bound.
    package private(set) var heldBytes = 0

    /// Creates empty bookkeeping.
    package init(policy: RetryPolicy) {
        self.policy = policy
    }

    /// Rows known and not finished (waiting or in flight).
    package var pendingCount: Int { rows.count }
    /// Attempts running.
    package var inFlightCount: Int { running.count }
    /// When the next waiting row becomes due (nil when none waits).
    package var nextDueAt: Int64? { scheduler.nextDueAt }

    /// The ordering group (its hash) of a known row (nil once it finished).
    package func itemHash(of seq: Int64) -> Int64? { rows[seq]?.entry.itemHash }

    /// Adds rows read from the outbox (in `seq` order), except those known already and those in `finished`
    /// (attempts ended, their outbox writes not committed yet). A row whose payload was kept aside takes it; returns
    /// how many did.
    ///
    /// A row's time was written by another clock reading (an earlier run, `dlq replay`, a bridge whose wall clock
    /// was ahead and has since been set back), so it is held to what the policy can ask for at `now`: a row not yet
    /// attempted (intake, a replay) is due at once, a retried one within the longest delay the policy gives. Taken
    /// as written, a time from a clock a day ahead held the row, and every later event of its item, for that day.
    @discardableResult
    package mutating func load(_ entries: [OutboxEntry], finished: Set<Int64> = [], now: Int64) -> Int {
        var fromAside = 0
        let latestRetry = now.addingReportingOverflow(Self.milliseconds(policy.longestWait))
        for var entry in entries where rows[entry.seq] == nil && !finished.contains(entry.seq) {
            let latest = entry.attempts == 0 ? now : (latestRetry.overflow ? Int64.max : latestRetry.partialValue)
            entry.nextAttemptAt = min(entry.nextAttemptAt, latest)
            let payload = aside.isEmpty ? nil : aside.removeValue(forKey: entry.seq)
            if payload != nil { fromAside += 1 }
            add(entry, payload: payload)
        }
        return fromAside
    }

    /// Keeps the payloads of rows not read yet (records intake handed over while delivery reads by `seq` order)
    /// until `load` reaches their rows.
    package mutating func keepAside(_ records: some Sequence<OutboxRecord>) {
        for record in records where rows[record.entry.seq] == nil && aside[record.entry.seq] == nil {
            aside[record.entry.seq] = record.payload
            heldBytes += OutboxHandOff.cost(of: record.payload)
        }
    }

    /// Drops the payloads kept aside for rows up to `seq` that the reads did not find (gone from the outbox).
    package mutating func dropAside(through seq: Int64) {
        guard !aside.isEmpty else { return }
        for (key, payload) in aside where key <= seq {
            aside[key] = nil
            heldBytes -= OutboxHandOff.cost(of: payload)
        }
    }

    /// Adds rows intake handed over in memory (in `seq` order, none known yet), keeping their payloads.
    package mutating func take(_ records: [OutboxRecord]) {
        for record in records where rows[record.entry.seq] == nil {
            heldBytes += OutboxHandOff.cost(of: record.payload)
            add(record.entry, payload: record.payload)
        }
    }

    /// Gives rows read from SQLite without their bodies the payloads intake handed over for them (the read ran while
    /// their records were on the way in memory), so their bodies are not read there too; returns how many took one.
    /// Records of rows not known (finished already) or known with their payload are left alone.
    package mutating func adopt(_ records: some Sequence<OutboxRecord>) -> Int {
        var adopted = 0
        for record in records where rows[record.entry.seq].map({ $0.payload == nil }) ?? false {
            rows[record.entry.seq]?.payload = record.payload
            heldBytes += OutboxHandOff.cost(of: record.payload)
            adopted += 1
        }
        return adopted
    }

    private mutating func add(_ entry: OutboxEntry, payload: OutboxPayload?) {
        let scheduled = DeliveryScheduler.Entry(seq: entry.seq, itemKey: entry.itemKey, dueAt: entry.nextAttemptAt)
        rows[entry.seq] = Row(entry: scheduled, attempts: entry.attempts, createdAt: entry.createdAt, payload: payload)
        scheduler.enqueue(scheduled)
    }

    /// The payload of row `seq` when intake handed it over (nil: read it from the outbox).
    package func payload(of seq: Int64) -> OutboxPayload? { rows[seq]?.payload }

    /// Forgets row `seq` and its payload.
    private mutating func remove(_ seq: Int64) -> Row? {
        guard let row = rows.removeValue(forKey: seq) else { return nil }
        if let payload = row.payload { heldBytes -= OutboxHandOff.cost(of: payload) }
        return row
    }

    /// Takes up to `limit` rows due at `now` and marks them in flight; returns their row ids.
    package mutating func takeDue(now: Int64, limit: Int) -> [Int64] {
        guard limit > 0 else { return [] }
        let taken = scheduler.takeDue(now: now, limit: limit)
        for entry in taken { running.insert(entry.seq) }
        return taken.map(\.seq)
    }

    /// Puts rows taken by `takeDue` back without an attempt, due at `dueAt` (the store failed before sending).
    package mutating func release(_ seqs: [Int64], dueAt: Int64) {
        for seq in seqs where running.remove(seq) != nil {
            guard let row = rows[seq] else { continue }
            scheduler.rescheduled(row.entry, dueAt: dueAt)
        }
    }

    /// Forgets a taken row that no longer exists in the outbox; the next row of its item becomes eligible.
    package mutating func forget(_ seq: Int64) {
        running.remove(seq)
        guard let row = remove(seq) else { return }
        scheduler.finished(row.entry)
    }

    /// Records how the attempt of row `seq` ended at `now` and decides what happens to the row; `jitter` is
    /// the random factor in [0.8, 1.2] for the retry delay. Nil when `seq` is not in flight.
    package mutating func attemptEnded(seq: Int64, outcome: AttemptOutcome, now: Int64, jitter: Double)
        -> AttemptConclusion?
    {
        guard running.remove(seq) != nil, var row = rows[seq] else { return nil }
        if case .cancelled = outcome {
            scheduler.rescheduled(row.entry, dueAt: now)
            return AttemptConclusion(
                decision: nil,
                write: nil,
                attempt: row.attempts,
                createdAt: row.createdAt,
                itemHash: row.entry.itemHash
            )
        }
        row.attempts += 1
        let status: Int?
        let policyOutcome: RetryPolicy.Outcome
        let lastError: String?
        var response: [UInt8] = []
        switch outcome {
        case .response(let code, let retryAfter, let body):
            status = code
            policyOutcome = .status(code, retryAfter: retryAfter)
            lastError = nil
            response = body
        case .failure(let message):
            status = nil
            policyOutcome = .transportFailure(message)
            lastError = message
        case .cancelled:
            preconditionFailure("handled above")
        }
        var decision = policy.decide(attempt: row.attempts, outcome: policyOutcome, jitter: jitter)
        let write: OutboxWrite
        switch decision {
        case .delivered:
            _ = remove(seq)
            scheduler.finished(row.entry)
            write = .delivered(seq: seq)
        case .retry(let delay):
            let (sum, overflow) = now.addingReportingOverflow(Self.milliseconds(delay))
            let dueAt = overflow ? Int64.max : sum
            rows[seq] = row
            scheduler.rescheduled(row.entry, dueAt: dueAt)
            write = .retry(
                seq: seq,
                attempts: row.attempts,
                nextAttemptAt: dueAt,
                lastStatus: status,
                lastError: lastError
            )
        case .deadLetter(var reason):
            if policyOutcome.isRetriable {
                reason += "; last: " + (status.map { "HTTP \($0)" } ?? lastError ?? "no answer")
                decision = .deadLetter(reason: reason)
            }
            _ = remove(seq)
            scheduler.finished(row.entry)
            write = .deadLetter(
                seq: seq,
                attempts: row.attempts,
                deadAt: now,
                reason: reason,
                lastStatus: status,
                response: Array(response.prefix(1024))
            )
        }
        return AttemptConclusion(
            decision: decision,
            write: write,
            attempt: row.attempts,
            createdAt: row.createdAt,
            itemHash: row.entry.itemHash
        )
    }

    /// Whole milliseconds of `duration`, rounded up so a retry is never earlier than asked; saturates at
    /// `Int64.max` (the policy bounds delays far below that, this only keeps the arithmetic from trapping).
    package static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, carry) = whole.addingReportingOverflow((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
        return carry ? .max : total
    }
}

extension RetryPolicy.Outcome {
    /// Whether the policy would retry this outcome given attempts left.
    fileprivate var isRetriable: Bool {
        switch self {
        case .status(let status, _): RetryPolicy.isRetriable(status: status)
        case .transportFailure: true
        }
    }
}
