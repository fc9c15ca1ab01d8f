@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks
import Testing

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(schedule: [.seconds(5), .seconds(30), .seconds(120)], maxAttempts: 5)

    @Test func twoHundredsAreDelivered() {
        #expect(policy.decide(attempt: 1, outcome: .status(204, retryAfter: nil), jitter: 1) == .delivered)
    }

    @Test(arguments: [408, 429, 500, 502, 503, 599])
    func retriableStatusesFollowTheSchedule(status: Int) {
        #expect(policy.decide(attempt: 1, outcome: .status(status, retryAfter: nil), jitter: 1) == .retry(after: .seconds(5)))
        #expect(policy.decide(attempt: 2, outcome: .status(status, retryAfter: nil), jitter: 0.8) == .retry(after: .seconds(24)))
        // The last entry repeats.
        #expect(policy.decide(attempt: 4, outcome: .status(status, retryAfter: nil), jitter: 1) == .retry(after: .seconds(120)))
    }

    @Test(arguments: [301, 302, 400, 401, 404, 410, 422])
    func otherStatusesAreDeadLetteredAtOnce(status: Int) {
        guard case .deadLetter = policy.decide(attempt: 1, outcome: .status(status, retryAfter: nil), jitter: 1) else {
            Issue.record("status \(status) should be dead-lettered")
            return
        }
    }

    @Test func transportFailuresRetryAndTheLastAttemptDeadLetters() {
        #expect(policy.decide(attempt: 3, outcome: .transportFailure("timeout"), jitter: 1.2) == .retry(after: .seconds(144)))
        #expect(policy.decide(attempt: 5, outcome: .transportFailure("timeout"), jitter: 1)
            == .deadLetter(reason: "gave up after 5 attempts"))
    }

    @Test func aLongerRetryAfterWins() {
        #expect(policy.decide(attempt: 1, outcome: .status(429, retryAfter: .seconds(60)), jitter: 1) == .retry(after: .seconds(60)))
        #expect(policy.decide(attempt: 1, outcome: .status(503, retryAfter: .seconds(2)), jitter: 1) == .retry(after: .seconds(5)))
    }

    /// docs/RELIABILITY.md: a Retry-After beyond the longest scheduled delay is clamped to it.
    @Test func aRetryAfterBeyondTheLongestScheduledDelayIsClampedToIt() {
        let huge = RetryAfter.parse("99999999999999999", now: 0)
        let clamped = policy.decide(attempt: 1, outcome: .status(503, retryAfter: huge), jitter: 1)
        #expect(clamped == .retry(after: .seconds(120)))
        #expect(policy.decide(attempt: 1, outcome: .status(429, retryAfter: .seconds(121)), jitter: 0.8)
            == .retry(after: .seconds(120)))
        // The jittered schedule may exceed the longest entry; the clamped Retry-After then does not win.
        let jittered = policy.decide(attempt: 4, outcome: .status(429, retryAfter: huge), jitter: 1.2)
        #expect(jittered == .retry(after: .seconds(144)))
    }
}

@Suite struct RetryAfterTests {
    @Test func parsesSecondsAndDates() {
        #expect(RetryAfter.parse("120", now: 0) == .seconds(120))
        #expect(RetryAfter.parse(" 2 ", now: 0) == .seconds(2))
        let date: Int64 = 784_111_777  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(RetryAfter.parseHTTPDate("Sun, 06 Nov 1994 08:49:37 GMT") == date)
        #expect(RetryAfter.parseHTTPDate("Sunday, 06-Nov-94 08:49:37 GMT") == date)
        #expect(RetryAfter.parseHTTPDate("Sun Nov  6 08:49:37 1994") == date)
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: date - 30) == .seconds(30))
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: date + 30) == .seconds(0))
    }

    @Test func ignoresGarbage() {
        #expect(RetryAfter.parse(nil, now: 0) == nil)
        #expect(RetryAfter.parse("soon", now: 0) == nil)
        #expect(RetryAfter.parse("-5", now: 0) == nil)
    }

    /// Hostile values from a receiver (issue 10, defect 1): none traps; negative or unparsable ones are ignored,
    /// huge ones give a delay that later arithmetic (Unix milliseconds) cannot overflow on.
    @Test(arguments: [
        "99999999999999999", "9223372036854775807", "9223372036854775808", "99999999999999999999999999999",
        "Sun, 06 Nov 99999999999999999 08:49:37 GMT", "Sun, 06 Nov 9223372036854775807 08:49:37 GMT",
        "Sun, 06 Nov 292277026596 08:49:37 GMT", "Sunday, 06-Nov-99999999999999999 08:49:37 GMT",
        "Sun Nov  6 08:49:37 99999999999999999", "Sun, 99 Nov 1994 99:99:99 GMT",
        "Sun, 06 Nov 1994 9223372036854775807:00:00 GMT",
    ])
    func hugeValuesGiveABoundedDelay(value: String) {
        let now = Int64(1_700_000_000)
        if let delay = RetryAfter.parse(value, now: now) {
            #expect(delay >= .zero)
            #expect(delay <= RetryAfter.longest)
            #expect(WebhookDeliveryState.milliseconds(delay) > 0)
        }
    }

    @Test(arguments: [
        "-1", "-99999999999999999", "-9223372036854775808", "+5", "5.5", "1e3", "0x10", "", "   ", "5 s",
        "Sun, 06 Nov -99999999999999999 08:49:37 GMT", "Sun, 06 Nov 1994 08:49 GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 -1:-1:-1 GMT",
    ])
    func negativeOrUnparsableValuesAreIgnored(value: String) {
        #expect(RetryAfter.parse(value, now: 1_700_000_000) == nil)
    }

    @Test func aDateFarInThePastIsZero() {
        #expect(RetryAfter.parse("Sun, 06 Nov 0001 08:49:37 GMT", now: 1_700_000_000) == .zero)
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: .max) == .zero)
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: .min) == RetryAfter.longest)
    }
}

@Suite struct DeliverySchedulerTests {
    typealias Entry = DeliveryScheduler.Entry

    @Test func oneItemIsNeverInFlightTwice() {
        var scheduler = DeliveryScheduler()
        scheduler.enqueue(Entry(seq: 1, itemKey: "a", dueAt: 0))
        scheduler.enqueue(Entry(seq: 2, itemKey: "a", dueAt: 0))
        scheduler.enqueue(Entry(seq: 3, itemKey: "b", dueAt: 0))
        let first = scheduler.takeDue(now: 0, limit: 10)
        #expect(first.map(\.seq) == [1, 3])
        #expect(scheduler.takeDue(now: 0, limit: 10).isEmpty)
        scheduler.finished(first[0])
        #expect(scheduler.takeDue(now: 0, limit: 10).map(\.seq) == [2])
    }

    @Test func aRetryingItemHoldsBackOnlyItsOwnLaterEvents() {
        var scheduler = DeliveryScheduler()
        scheduler.enqueue(Entry(seq: 1, itemKey: "a", dueAt: 0))
        scheduler.enqueue(Entry(seq: 2, itemKey: "a", dueAt: 0))
        scheduler.enqueue(Entry(seq: 3, itemKey: "b", dueAt: 0))
        let taken = scheduler.takeDue(now: 0, limit: 1)
        #expect(taken.map(\.seq) == [1])
        scheduler.rescheduled(taken[0], dueAt: 5_000)
        #expect(scheduler.takeDue(now: 100, limit: 10).map(\.seq) == [3])
        #expect(scheduler.nextDueAt == 5_000)
        let retry = scheduler.takeDue(now: 5_000, limit: 10)
        #expect(retry.map(\.seq) == [1])
        scheduler.finished(retry[0])
        #expect(scheduler.takeDue(now: 5_000, limit: 10).map(\.seq) == [2])
    }

    @Test func respectsTheInFlightLimitAndDueTimes() {
        var scheduler = DeliveryScheduler()
        for seq in 1...5 { scheduler.enqueue(Entry(seq: Int64(seq), itemKey: "k\(seq)", dueAt: Int64(seq * 10))) }
        #expect(scheduler.takeDue(now: 30, limit: 2).map(\.seq) == [1, 2])
        #expect(scheduler.takeDue(now: 30, limit: 2).map(\.seq) == [3])  // 4 and 5 are not due yet
        #expect(scheduler.count == 5)
        #expect(scheduler.inFlightCount == 3)
    }

    @Test func itemsAreGroupedByTheFNV1aHashOfTheirKey() {
        #expect(Entry.hash("") == Int64(bitPattern: 0xcbf2_9ce4_8422_2325))
        #expect(Entry.hash("a") == Int64(bitPattern: 0xaf63_dc4c_8601_ec8c))
        #expect(Entry(seq: 1, itemKey: "articles\u{0}1", dueAt: 0).itemHash != Entry(seq: 2, itemKey: "articles\u{0}2", dueAt: 0).itemHash)
    }

    @Test func manyItemsKeepPerItemOrder() {
        var scheduler = DeliveryScheduler()
        var seq: Int64 = 0
        for round in 0..<20 {
            for item in 0..<50 {
                seq += 1
                scheduler.enqueue(Entry(seq: seq, itemKey: "i\(item)", dueAt: Int64(round)))
            }
        }
        var delivered: [String: [Int64]] = [:]
        var now: Int64 = 0
        while scheduler.count > 0 {
            let batch = scheduler.takeDue(now: now, limit: 8)
            for entry in batch.shuffled() {
                if entry.seq % 7 == 0 && delivered[entry.itemKey]?.last != -entry.seq {
                    delivered[entry.itemKey, default: []].append(-entry.seq)  // mark one failed attempt
                    scheduler.rescheduled(entry, dueAt: now + 3)
                } else {
                    delivered[entry.itemKey, default: []].append(entry.seq)
                    scheduler.finished(entry)
                }
            }
            now += 1
        }
        for (_, sequence) in delivered {
            let successes = sequence.filter { $0 > 0 }
            #expect(successes == successes.sorted())
            #expect(successes.count == 20)
        }
    }
}
