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
        let tokens = first.map { scheduler.published(slot: $0.slot, now: now) }
        // a1 fails (retriable): a2 must not overtake it; a1 comes back after its delay.
        #expect(scheduler.answered(token: tokens[0], retriable, now: now) == nil)
        #expect(scheduler.takeReady(now: now, maximum: 10).isEmpty)
        let retry = scheduler.takeReady(now: now + .seconds(2), maximum: 10)
        #expect(retry.map(\.message.messageID) == ["a1"])
        let retryToken = scheduler.published(slot: retry[0].slot, now: now)
        #expect(scheduler.answered(token: retryToken, ack, now: now) == nil)
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
        for entry in scheduler.takeReady(now: now, maximum: 10) { _ = scheduler.published(slot: entry.slot, now: now) }
        let full = NATSError(kind: .retriable, message: "maximum messages exceeded (JetStream error 10077)")
        _ = scheduler.timeOut(sentBefore: now, error: NATSError(kind: .retriable, message: "timeout"), now: now)
        #expect(scheduler.lastRefusal == nil, "an unanswered publish is no refusal")
        let tokens = scheduler.takeReady(now: now + .seconds(2), maximum: 10).map {
            scheduler.published(slot: $0.slot, now: now)
        }
        _ = scheduler.answered(token: tokens[0], .failed(full), now: now)
        #expect(scheduler.lastRefusal?.message == full.message)
        _ = scheduler.answered(token: tokens[1], ack, now: now)
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
        let x = scheduler.published(slot: ready[0].slot, now: .now)
        let y = scheduler.published(slot: ready[1].slot, now: .now)
        #expect(scheduler.answered(token: 77, ack, now: .now) == nil)
        #expect(scheduler.answered(token: y + 1 << 20, ack, now: .now) == nil, "a later publish of the same slot")
        #expect(scheduler.answered(token: y, .failed(NATSError(kind: .rejected, message: "too big")), now: .now) == nil)
        let done = scheduler.answered(token: x, ack, now: .now)
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
        let token = scheduler.published(slot: first[0].slot, now: .now)
        let error = NATSError(kind: .retriable, message: "closed")
        #expect(scheduler.close(error: error).isEmpty, "the in-flight head still holds the batch open")
        let done = scheduler.answered(token: token, retriable, now: .now)
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
        let firstToken = scheduler.published(slot: first[0].slot, now: start)
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
        let retryToken = scheduler.published(slot: retry[0].slot, now: start + .seconds(6))
        // The first publish's answer comes late: unknown token, ignored; the retry's answer counts.
        #expect(scheduler.answered(token: firstToken, ack, now: start + .seconds(6)) == nil)
        #expect(scheduler.inFlightCount == 1)
        #expect(scheduler.answered(token: retryToken, ack, now: start + .seconds(6)) == nil)
        let next = scheduler.takeReady(now: start + .seconds(6), maximum: 10)
        #expect(next.map(\.message.messageID) == ["a2"])
        let nextToken = scheduler.published(slot: next[0].slot, now: start + .seconds(6))
        outcomes = scheduler.answered(token: nextToken, ack, now: start + .seconds(6))?.outcomes ?? []
        #expect(outcomes.count == 2 && outcomes.allSatisfy { $0.ack != nil })
    }

    @Test func aTimeOutWhileClosingFinishesTheMessageAsFailed() {
        var scheduler = JetStreamPublishScheduler(limit: 10, retryDelay: .milliseconds(1), maxRetryDelay: .seconds(1))
        let (batch, _) = scheduler.openBatch(count: 1) { _ in }
        scheduler.add(message("m", key: nil), batch: batch, index: 0)
        let now = ContinuousClock.now
        _ = scheduler.published(slot: scheduler.takeReady(now: now, maximum: 1)[0].slot, now: now)
        #expect(scheduler.close(error: NATSError(kind: .retriable, message: "closed")).isEmpty)
        let done = scheduler.timeOut(sentBefore: now, error: NATSError(kind: .retriable, message: "late"), now: now)
        #expect(done.count == 1 && done.first?.outcomes.first?.error?.message == "late")
        #expect(scheduler.heldCount == 0 && scheduler.inFlightCount == 0)
    }

    /// Slots are reused once their message finished, and a token names its slot: through many more messages than
    /// the bound, answered out of order (some after a retry), each key's messages are published one at a time in
    /// submission order, a stale token finds nothing, and every batch completes once with all its outcomes.
    @Test func reusedSlotsKeepEachKeysOrderAndEveryBatchCompletesOnce() {
        var scheduler = JetStreamPublishScheduler(limit: 6, retryDelay: .milliseconds(1), maxRetryDelay: .seconds(1))
        let keys = ["a", "b", "c", nil]
        let now = ContinuousClock.now
        var submitted: [String: [String]] = [:]
        var published: [String: [String]] = [:]
        var inFlight: [(token: UInt, message: JetStreamMessage)] = []
        var stale: [UInt] = []
        var completedOutcomes = 0
        var nextMessage = 0
        var rounds = 0
        while (nextMessage < 60 || scheduler.heldCount > 0) && rounds < 1000 {
            rounds += 1
            if nextMessage < 60 && scheduler.room > 0 {
                let count = min(scheduler.room, 3, 60 - nextMessage)
                let first = nextMessage
                let (batch, _) = scheduler.openBatch(count: count) { outcomes in
                    #expect(outcomes.count == count && outcomes.allSatisfy { $0.ack != nil })
                }
                for index in 0..<count {
                    let key = keys[(first + index) % keys.count]
                    let id = "m\(first + index)"
                    submitted[key ?? "-", default: []].append(id)
                    scheduler.add(message(id, key: key), batch: batch, index: index)
                }
                nextMessage += count
            }
            for entry in scheduler.takeReady(now: now + .seconds(rounds), maximum: 2) {
                let key = entry.message.orderingKey
                #expect(key == nil || !inFlight.contains { $0.message.orderingKey == key }, "one at a time per key")
                published[key ?? "-", default: []].append(entry.message.messageID)
                inFlight.append((scheduler.published(slot: entry.slot, now: now), entry.message))
            }
            // Answer the newest first; every fifth answer is a retriable failure (published again later).
            guard let (token, message) = inFlight.popLast() else { continue }
            #expect(stale.allSatisfy { scheduler.answered(token: $0, ack, now: now) == nil })
            if rounds % 5 == 0 {
                #expect(scheduler.answered(token: token, retriable, now: now) == nil)
                published[message.orderingKey ?? "-"]?.removeAll { $0 == message.messageID }  // published again
            } else if let done = scheduler.answered(token: token, ack, now: now) {
                done.completion(done.outcomes)
                completedOutcomes += done.outcomes.count
            }
            stale.append(token)
        }
        for key in ["a", "b", "c"] { #expect(published[key] == submitted[key]) }
        #expect(published["-"]?.sorted() == submitted["-"]?.sorted(), "messages without a key have no order")
        #expect(nextMessage == 60 && scheduler.heldCount == 0, "stuck after \(rounds) rounds")
        #expect(scheduler.inFlightCount == 0 && scheduler.retryCount == 0 && scheduler.room == 6)
        #expect(completedOutcomes == 60)
    }

    /// A publish that timed out and went again under a new token, then reported as failed under its old one (a send
    /// that blocked past the deadline): the old token names no publish in flight, so nothing changes; the message
    /// is not put back for a retry while its new publish is in flight.
    @Test func aFailureReportedForATimedOutTokenChangesNothing() {
        var scheduler = JetStreamPublishScheduler(limit: 4, retryDelay: .milliseconds(1), maxRetryDelay: .seconds(1))
        let (batch, _) = scheduler.openBatch(count: 1) { _ in }
        scheduler.add(message("m", key: "k"), batch: batch, index: 0)
        let start = ContinuousClock.now
        let old = scheduler.published(slot: scheduler.takeReady(now: start, maximum: 1)[0].slot, now: start)
        let timeout = NATSError(kind: .retriable, message: "no acknowledgement")
        #expect(scheduler.timeOut(sentBefore: start, error: timeout, now: start).isEmpty)
        let retry = scheduler.takeReady(now: start + .seconds(2), maximum: 1)
        let new = scheduler.published(slot: retry[0].slot, now: start + .seconds(2))
        let sendFailed = NATSError(kind: .retriable, message: "connection closed")
        #expect(scheduler.publishFailed(token: old, error: sendFailed, now: start + .seconds(2)) == nil)
        #expect(scheduler.inFlightCount == 1 && scheduler.retryCount == 0)
        #expect(scheduler.takeReady(now: start + .seconds(9), maximum: 1).isEmpty, "not published twice at once")
        #expect(scheduler.answered(token: new, ack, now: start + .seconds(2))?.outcomes.first?.ack != nil)
    }
}
