import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

@Suite struct WebhookDeliveryStateTests {
    let policy = RetryPolicy(schedule: [.seconds(1), .seconds(10)], maxAttempts: 3)

    func entry(_ seq: Int64, key: String, at: Int64 = 0, attempts: Int = 0) -> OutboxEntry {
        OutboxEntry(seq: seq, collection: "articles", key: key, attempts: attempts, nextAttemptAt: at, createdAt: 0)
    }

    func ok() -> AttemptOutcome { .response(status: 200, retryAfter: nil, body: []) }

    /// Bodies handed over before their rows are read (`keepAside`), and after (`adopt`), reach their rows and count
    /// against the hand-off's bound (`heldBytes`) exactly while delivery keeps them.
    @Test func bodiesHandedOverAroundAReadReachTheirRowsAndAreCountedWhileKept() {
        func record(_ seq: Int64) -> OutboxRecord {
            OutboxRecord(seq: seq, event: webhookEvent(Int(seq), key: "k\(seq)"), now: 0)
        }
        let cost = OutboxHandOff.cost(of: record(1).payload)
        var state = WebhookDeliveryState(policy: policy)
        state.keepAside([record(1), record(2)])
        #expect(state.heldBytes == 2 * cost)
        // Row 2 is gone by the time the read runs: its body is dropped once the read passed it.
        #expect(state.load([entry(1, key: "k1"), entry(3, key: "k3")], now: 0) == 1)
        state.dropAside(through: 3)
        #expect(state.heldBytes == cost)
        #expect(state.payload(of: 1)?.eventID == "evt_1")
        #expect(state.payload(of: 3) == nil)
        // Row 3's record arrives after the read: it takes the body; a record of a row not known is left alone.
        #expect(state.adopt([record(3), record(4)]) == 1)
        #expect(state.payload(of: 3)?.eventID == "evt_3")
        #expect(state.heldBytes == 2 * cost)
        #expect(state.takeDue(now: 0, limit: 10) == [1, 3])
        _ = state.attemptEnded(seq: 1, outcome: ok(), now: 1, jitter: 1)
        _ = state.attemptEnded(seq: 3, outcome: ok(), now: 1, jitter: 1)
        #expect(state.heldBytes == 0)
        #expect(state.pendingCount == 0)
    }

    @Test func oneItemAtATimeInOrderAndItemsInParallelUpToTheLimit() {
        var state = WebhookDeliveryState(policy: policy)
        state.load([entry(1, key: "a"), entry(2, key: "a"), entry(3, key: "b"), entry(4, key: "c")], now: 0)
        #expect(state.takeDue(now: 0, limit: 2) == [1, 3])
        #expect(state.takeDue(now: 0, limit: 5) == [4])  // "a" is busy: its second event waits
        #expect(state.inFlightCount == 3)
        let ended1 = state.attemptEnded(seq: 1, outcome: ok(), now: 10, jitter: 1)
        #expect(ended1?.write == .delivered(seq: 1))
        #expect(state.takeDue(now: 10, limit: 5) == [2])
        #expect(state.pendingCount == 3)
    }

    @Test func retriesFollowTheScheduleAndBlockOnlyTheirItem() throws {
        var state = WebhookDeliveryState(policy: policy)
        state.load([entry(1, key: "a"), entry(2, key: "a"), entry(3, key: "b")], now: 0)
        #expect(state.takeDue(now: 0, limit: 10) == [1, 3])
        let firstResult = state.attemptEnded(
            seq: 1,
            outcome: .response(status: 503, retryAfter: nil, body: []),
            now: 100,
            jitter: 1.2
        )
        let first = try #require(firstResult)
        #expect(first.decision == .retry(after: .milliseconds(1200)))
        #expect(first.write == .retry(seq: 1, attempts: 1, nextAttemptAt: 1300, lastStatus: 503, lastError: nil))
        let ended2 = state.attemptEnded(seq: 3, outcome: ok(), now: 100, jitter: 1)
        #expect(ended2?.decision == .delivered)
        #expect(state.takeDue(now: 1299, limit: 10) == [])  // neither the retry nor the item's next event yet
        #expect(state.nextDueAt == 1300)
        #expect(state.takeDue(now: 1300, limit: 10) == [1])
        let secondResult = state.attemptEnded(seq: 1, outcome: .failure("timeout"), now: 2000, jitter: 0.8)
        let second = try #require(secondResult)
        #expect(
            second.write == .retry(seq: 1, attempts: 2, nextAttemptAt: 10000, lastStatus: nil, lastError: "timeout")
        )
        #expect(state.takeDue(now: 10000, limit: 10) == [1])
        let thirdResult = state.attemptEnded(
            seq: 1,
            outcome: .response(status: 502, retryAfter: nil, body: []),
            now: 10000,
            jitter: 1
        )
        let third = try #require(thirdResult)
        #expect(third.decision == .deadLetter(reason: "gave up after 3 attempts; last: HTTP 502"))
        #expect(state.takeDue(now: 10000, limit: 10) == [2])
    }

    @Test func aLongerRetryAfterReplacesTheScheduledDelay() {
        var state = WebhookDeliveryState(policy: policy)
        state.load([entry(1, key: "a")], now: 0)
        _ = state.takeDue(now: 0, limit: 1)
        let outcome = AttemptOutcome.response(status: 429, retryAfter: .seconds(5), body: [])
        let ended3 = state.attemptEnded(seq: 1, outcome: outcome, now: 0, jitter: 1)
        #expect(ended3?.decision == .retry(after: .seconds(5)))
        #expect(state.nextDueAt == 5000)
    }

    @Test func otherStatusesAreDeadLetteredAtOnceWithTheFirstKiBOfTheAnswer() throws {
        var state = WebhookDeliveryState(policy: policy)
        state.load([entry(1, key: "a", attempts: 0), entry(2, key: "a")], now: 0)
        _ = state.takeDue(now: 0, limit: 1)
        let body = [UInt8](repeating: 65, count: 3000)
        let conclusionResult = state.attemptEnded(
            seq: 1,
            outcome: .response(status: 410, retryAfter: nil, body: body),
            now: 7,
            jitter: 1
        )
        let conclusion = try #require(conclusionResult)
        #expect(
            conclusion.write
                == .deadLetter(
                    seq: 1,
                    attempts: 1,
                    deadAt: 7,
                    reason: "HTTP 410 is not retried",
                    lastStatus: 410,
                    response: Array(body.prefix(1024))
                )
        )
        #expect(state.takeDue(now: 7, limit: 1) == [2])
    }

    @Test func attemptsCountFromTheStoredNumber() throws {
        var state = WebhookDeliveryState(policy: policy)
        state.load([entry(1, key: "a", attempts: 2)], now: 0)  // two attempts before a restart
        _ = state.takeDue(now: 0, limit: 1)
        let conclusionResult = state.attemptEnded(seq: 1, outcome: .failure("refused"), now: 0, jitter: 1)
        let conclusion = try #require(conclusionResult)
        #expect(conclusion.decision == .deadLetter(reason: "gave up after 3 attempts; last: refused"))
    }

    @Test func cancelledAttemptsDoNotCountAndReleasedOrMissingRowsAreHandled() throws {
        var state = WebhookDeliveryState(policy: policy)
        state.load([entry(1, key: "a"), entry(2, key: "a"), entry(3, key: "b")], now: 0)
        #expect(state.takeDue(now: 0, limit: 10) == [1, 3])
        let cancelledResult = state.attemptEnded(seq: 1, outcome: .cancelled, now: 50, jitter: 1)
        let cancelled = try #require(cancelledResult)
        #expect(cancelled.write == nil && cancelled.decision == nil)
        #expect(state.takeDue(now: 50, limit: 10) == [1])
        let ended4 = state.attemptEnded(seq: 1, outcome: ok(), now: 60, jitter: 1)
        #expect(ended4?.attempt == 1)
        state.release([3], dueAt: 500)
        #expect(state.takeDue(now: 499, limit: 10) == [2])
        state.forget(2)  // its row vanished: the item moves on
        #expect(state.pendingCount == 1)
        #expect(state.takeDue(now: 500, limit: 10) == [3])
        let ended5 = state.attemptEnded(seq: 99, outcome: ok(), now: 0, jitter: 1)
        #expect(ended5 == nil)
    }

    /// Times in the outbox were written by another clock reading: an earlier run, `dlq replay`, a bridge whose wall
    /// clock was a day ahead and has since been set back. A row not attempted yet is due at once, a retried one within
    /// the longest wait the policy gives (10 s × 1.2 here); taken as written, both waited the day.
    @Test func rowTimesFromAClockAheadAreHeldToWhatThePolicyCanAskFor() {
        var state = WebhookDeliveryState(policy: policy)
        let now: Int64 = 1_000_000
        let dayAhead = now + 86_400_000
        state.load([entry(1, key: "a", at: dayAhead, attempts: 2), entry(2, key: "b", at: dayAhead)], now: now)
        #expect(state.takeDue(now: now, limit: 10) == [2])
        #expect(state.takeDue(now: now + 11_999, limit: 10) == [])
        #expect(state.takeDue(now: now + 12_000, limit: 10) == [1])
        // Times already within the bounds are kept.
        state.load([entry(3, key: "c", at: now + 5_000, attempts: 1), entry(4, key: "d", at: now - 5)], now: now)
        #expect(state.takeDue(now: now, limit: 10) == [4])
        #expect(state.takeDue(now: now + 4_999, limit: 10) == [])
        #expect(state.takeDue(now: now + 5_000, limit: 10) == [3])
    }

    @Test func loadingTheSameRowsAgainAddsNothing() {
        var state = WebhookDeliveryState(policy: policy)
        state.load([entry(1, key: "a"), entry(2, key: "b")], now: 0)
        state.load([entry(2, key: "b"), entry(5, key: "b", at: 100)], now: 0)
        #expect(state.pendingCount == 3)
        #expect(state.takeDue(now: 100, limit: 10) == [1, 2])
    }

    @Test func handedRowsKeepTheirPayloadUntilTheyFinishAndFinishedRowsAreNotLoadedAgain() {
        var state = WebhookDeliveryState(policy: policy)
        let records = (1...2).map { OutboxRecord(seq: Int64($0), event: webhookEvent($0, key: "k\($0)"), now: 0) }
        state.take(records)
        #expect(state.payload(of: 1) == records[0].payload)
        #expect(state.heldBytes == records.map { OutboxHandOff.cost(of: $0.payload) }.reduce(0, +))
        #expect(state.takeDue(now: 0, limit: 10) == [1, 2])
        #expect(state.attemptEnded(seq: 1, outcome: ok(), now: 1, jitter: 1)?.write == .delivered(seq: 1))
        #expect(state.heldBytes == OutboxHandOff.cost(of: records[1].payload))
        // Row 1's removal is not committed yet, so SQLite still has it; row 2 is known; row 3 is new.
        state.load([entry(1, key: "k1"), entry(2, key: "k2"), entry(3, key: "k3")], finished: [1], now: 0)
        #expect(state.pendingCount == 2)
        #expect(state.payload(of: 3) == nil)
        #expect(state.takeDue(now: 0, limit: 10) == [3])
    }
}
