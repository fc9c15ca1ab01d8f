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
        for (token, entry) in first.enumerated() { scheduler.published(slot: entry.slot, token: UInt(token + 1)) }
        // a1 fails (retriable): a2 must not overtake it; a1 comes back after its delay.
        #expect(scheduler.answered(token: 1, retriable, now: now) == nil)
        #expect(scheduler.takeReady(now: now, maximum: 10).isEmpty)
        let retry = scheduler.takeReady(now: now + .seconds(2), maximum: 10)
        #expect(retry.map(\.message.messageID) == ["a1"])
        scheduler.published(slot: retry[0].slot, token: 9)
        #expect(scheduler.answered(token: 9, ack, now: now) == nil)
        #expect(scheduler.takeReady(now: now, maximum: 10).map(\.message.messageID) == ["a2"])
    }

    @Test func aBatchCompletesOnceWithOutcomesInOrderAndUnknownTokensAreIgnored() {
        var scheduler = JetStreamPublishScheduler(limit: 2, retryDelay: .milliseconds(1), maxRetryDelay: .seconds(1))
        let (batch, empty) = scheduler.openBatch(count: 2) { _ in }
        #expect(empty == nil && scheduler.room == 2)
        scheduler.add(message("x", key: "k"), batch: batch, index: 0)
        scheduler.add(message("y", key: nil), batch: batch, index: 1)
        #expect(scheduler.room == 0)
        let ready = scheduler.takeReady(now: .now, maximum: 10)
        scheduler.published(slot: ready[0].slot, token: 1)
        scheduler.published(slot: ready[1].slot, token: 2)
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
        scheduler.published(slot: first[0].slot, token: 5)
        let error = NATSError(kind: .retriable, message: "closed")
        #expect(scheduler.close(error: error).isEmpty, "the in-flight head still holds the batch open")
        let done = scheduler.answered(token: 5, retriable, now: .now)
        #expect(done?.outcomes.count == 3 && done?.outcomes.allSatisfy { $0.error != nil } == true)
        #expect(scheduler.heldCount == 0 && scheduler.nextRetry == nil)
    }
}
