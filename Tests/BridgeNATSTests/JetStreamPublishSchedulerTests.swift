import Testing

@testable import BridgeNATS

/// The publish scheduler alone: per-key order, retries, the bound, one completion per batch, closing.
@Suite struct JetStreamPublishSchedulerTests {
    private func message(_ id: String, key: String?) -> JetStreamMessage {
        JetStreamMessage(subject: "s.x", messageID: id, orderingKey: key, payload: [])
    }

    private let ack = JetStreamOutcome.acknowledged(JetStreamAck(stream: "S", sequence: 1, duplicate: false))
    private let retriable = JetStreamOutcome.failed(NATSError(kind: .retriable, message: "timeout"))

    @Test func onlyTheOldestUnfinishedMessageOfAKeyIsPublished() {
        var scheduler = JetStreamPublishScheduler(limit: 10, retryDelay: .milliseconds(100), maxRetryDelay: .seconds(1))
        let (batch, _) = scheduler.openBatch(count: 4) { _ in }
        for (index, (id, key)) in [("a1", "a"), ("b1", "b"), ("a2", "a"), ("n", nil)].enumerated() {
            scheduler.add(message(id, key: key), batch: batch, index: index)
        }
        let now = ContinuousClock.now
        let first = scheduler.takeReady(now: now, maximum: 10)
        #expect(first.map(\.message.messageID) == ["a1", "b1", "n"])
        for (token, entry) in first.enumerated() {
            scheduler.published(slot: entry.slot, token: UInt(token + 1), now: now)
        }
        // a1 fails (retriable): a2 must not overtake it; a1 comes back after its delay.
        #expect(scheduler.answered(token: 1, retriable, now: now) == nil)
        #expect(scheduler.takeReady(now: now, maximum: 10).isEmpty)
        let retry = scheduler.takeReady(now: now + .seconds(2), maximum: 10)
        #expect(retry.map(\.message.messageID) == ["a1"])
        scheduler.published(slot: retry[0].slot, token: 9, now: now)
        #expect(scheduler.answered(token: 9, ack, now: now) == nil)
        #expect(scheduler.takeReady(now: now, maximum: 10).map(\.message.messageID) == ["a2"])
    }

    /// Found with a full stream (discard new): the server answered every publish "maximum messages exceeded" and
    /// the sink only said "no confirmation for 2s". The last refusal the server sent is kept until a publish is
    /// acknowledged, for the sink to name; a publish that went unanswered is no refusal.
    @Test func theServersLastRefusalIsKeptUntilAPublishIsAcknowledged() {
        var scheduler = JetStreamPublishScheduler(limit: 10, retryDelay: .milliseconds(100), maxRetryDelay: .seconds(1))
        let (batch, _) = scheduler.openBatch(count: 2) { _ in }
        scheduler.add(message("a", key: "a"), batch: batch, index: 0)
        scheduler.add(message("b", key: "b"), batch: batch, index: 1)
        let now = ContinuousClock.now
        for (token, entry) in scheduler.takeReady(now: now, maximum: 10).enumerated() {
            scheduler.published(slot: entry.slot, token: UInt(token + 1), now: now)
        }
        let full = NATSError(kind: .retriable, message: "maximum messages exceeded (JetStream error 10077)")
        _ = scheduler.timeOut(sentBefore: now, error: NATSError(kind: .retriable, message: "timeout"), now: now)
        #expect(scheduler.lastRefusal == nil, "an unanswered publish is no refusal")
        for (token, entry) in scheduler.takeReady(now: now + .seconds(2), maximum: 10).enumerated() {
            scheduler.published(slot: entry.slot, token: UInt(token + 3), now: now)
        }
        _ = scheduler.answered(token: 3, .failed(full), now: now)
        #expect(scheduler.lastRefusal?.message == full.message)
        _ = scheduler.answered(token: 4, ack, now: now)
        #expect(scheduler.lastRefusal == nil)
    }

    @Test func aBatchCompletesOnceWithOutcomesInOrderAndUnknownTokensAreIgnored() {
        var scheduler = JetStreamPublishScheduler(limit: 2, retryDelay: .milliseconds(1), maxRetryDelay: .seconds(1))
        let (batch, empty) = scheduler.openBatch(count: 2) { _ in }
        #expect(empty == nil && scheduler.room == 2)
        scheduler.add(message("x", key: "k"), batch: batch, index: 0)
        scheduler.add(message("y", key: nil), batch: batch, index: 1)
        #expect(scheduler.room == 0)
        let ready = scheduler.takeReady(now: .now, maximum: 10)
        scheduler.published(slot: ready[0].slot, token: 1, now: .now)
        scheduler.published(slot: ready[1].slot, token: 2, now: .now)
        #expect(scheduler.answered(token: 77, ack, now: .now) == nil)
        #expect(scheduler.answered(token: 2, .failed(NATSError(kind: .rejected, message: "too big")), now: .now) == nil)
        let done = scheduler.answered(token: 1, ack, now: .now)
        #expect(done?.outcomes.map { $0.ack != nil } == [true, false])
        #expect(scheduler.heldCount == 0 && scheduler.room == 2)
        #expect(scheduler.openBatch(count: 0) { _ in }.1?.outcomes.isEmpty == true)
    }

    @Test func closingFailsWhatWaitsAndStopsRetrying() {
        var scheduler = JetStreamPublishScheduler(limit: 10, retryDelay: .milliseconds(1), maxRetryDelay: .seconds(1))
        let (batch, _) = scheduler.openBatch(count: 3) { _ in }
        for index in 0..<3 { scheduler.add(message("m\(index)", key: "same"), batch: batch, index: index) }
        let first = scheduler.takeReady(now: .now, maximum: 10)
        #expect(first.count == 1)
        scheduler.published(slot: first[0].slot, token: 5, now: .now)
        let error = NATSError(kind: .retriable, message: "closed")
        #expect(scheduler.close(error: error).isEmpty, "the in-flight head still holds the batch open")
        let done = scheduler.answered(token: 5, retriable, now: .now)
        #expect(done?.outcomes.count == 3 && done?.outcomes.allSatisfy { $0.error != nil } == true)
        #expect(scheduler.heldCount == 0 && scheduler.nextRetry == nil)
    }

    @Test func aPublishWithoutAnswerTimesOutIsRetriedUnderANewTokenAndItsLateAnswerIsIgnored() {
        var scheduler = JetStreamPublishScheduler(limit: 10, retryDelay: .milliseconds(100), maxRetryDelay: .seconds(1))
        var outcomes: [JetStreamOutcome] = []
        let (batch, _) = scheduler.openBatch(count: 2) { _ in }
        scheduler.add(message("a1", key: "a"), batch: batch, index: 0)
        scheduler.add(message("a2", key: "a"), batch: batch, index: 1)
        let start = ContinuousClock.now
        let first = scheduler.takeReady(now: start, maximum: 10)
        scheduler.published(slot: first[0].slot, token: 1, now: start)
        let timeout = NATSError(kind: .retriable, message: "no acknowledgement")
        // Not late yet: the deadline is for publishes made at or before the cutoff.
        #expect(scheduler.timeOut(sentBefore: start - .milliseconds(1), error: timeout, now: start).isEmpty)
        #expect(scheduler.inFlightCount == 1)
        #expect(scheduler.timeOut(sentBefore: start, error: timeout, now: start + .seconds(5)).isEmpty)
        #expect(scheduler.inFlightCount == 0 && scheduler.retryCount == 1)
        // Its key waits: a2 must not overtake the timed-out a1.
        #expect(scheduler.takeReady(now: start + .seconds(5), maximum: 10).isEmpty)
        let retry = scheduler.takeReady(now: start + .seconds(6), maximum: 10)
        #expect(retry.map(\.message.messageID) == ["a1"])
        scheduler.published(slot: retry[0].slot, token: 2, now: start + .seconds(6))
        // The first publish's answer comes late: unknown token, ignored; the retry's answer counts.
        #expect(scheduler.answered(token: 1, ack, now: start + .seconds(6)) == nil)
        #expect(scheduler.inFlightCount == 1)
        #expect(scheduler.answered(token: 2, ack, now: start + .seconds(6)) == nil)
        let next = scheduler.takeReady(now: start + .seconds(6), maximum: 10)
        #expect(next.map(\.message.messageID) == ["a2"])
        scheduler.published(slot: next[0].slot, token: 3, now: start + .seconds(6))
        outcomes = scheduler.answered(token: 3, ack, now: start + .seconds(6))?.outcomes ?? []
        #expect(outcomes.count == 2 && outcomes.allSatisfy { $0.ack != nil })
    }

    @Test func aTimeOutWhileClosingFinishesTheMessageAsFailed() {
        var scheduler = JetStreamPublishScheduler(limit: 10, retryDelay: .milliseconds(1), maxRetryDelay: .seconds(1))
        let (batch, _) = scheduler.openBatch(count: 1) { _ in }
        scheduler.add(message("m", key: nil), batch: batch, index: 0)
        let now = ContinuousClock.now
        scheduler.published(slot: scheduler.takeReady(now: now, maximum: 1)[0].slot, token: 7, now: now)
        #expect(scheduler.close(error: NATSError(kind: .retriable, message: "closed")).isEmpty)
        let done = scheduler.timeOut(sentBefore: now, error: NATSError(kind: .retriable, message: "late"), now: now)
        #expect(done.count == 1 && done.first?.outcomes.first?.error?.message == "late")
        #expect(scheduler.heldCount == 0 && scheduler.inFlightCount == 0)
    }
}
