import BridgeHTTP
import Testing

@testable import BridgeSinks

/// When the engine's answers ring the delivery loop (`CompletionInbox`): failures and a running-low engine at once,
/// plain successes once per batch or after the hold limit.
@Suite struct CompletionInboxTests {
    private let start = ContinuousClock.now

    private func inbox(outstanding: Int) -> CompletionInbox {
        let inbox = CompletionInbox(batch: 16, lowWater: 16, holdLimit: .milliseconds(2))
        inbox.submitted(outstanding)
        return inbox
    }

    private func answer(_ tag: Int64, status: Int = 204, sent: Bool = true) -> DeliveryReceiver.Completion {
        DeliveryReceiver.Completion(tag: tag, result: .success(HTTPResponse(status: status)), sent: sent)
    }

    @Test func successesWhileManyAreOutstandingRingOncePerBatch() {
        let inbox = inbox(outstanding: 64)
        for tag in 1...15 { #expect(!inbox.answered([answer(Int64(tag))], now: start)) }
        #expect(inbox.answered([answer(16)], now: start))
        var taken: [DeliveryReceiver.Completion] = []
        inbox.take(into: &taken)
        #expect(taken.map(\.tag) == Array(1...16))
        #expect(!inbox.isHolding)
        #expect(!inbox.answered([answer(17)], now: start))  // a new batch starts
        #expect(inbox.isHolding)
    }

    @Test func anAnswerThatIsNotASent2xxRingsAtOnce() {
        let inbox = inbox(outstanding: 64)
        #expect(!inbox.answered([answer(1)], now: start))
        #expect(inbox.answered([answer(2, status: 503)], now: start))
        #expect(inbox.answered([answer(3, status: 302)], now: start))
        #expect(inbox.answered([answer(4, sent: false)], now: start))  // withdrawn before it was sent
        let failure = DeliveryReceiver.Completion(
            tag: 5, result: .failure(HTTPClientError(kind: .timeout, message: "timed out", url: "")), sent: true)
        #expect(inbox.answered([answer(6), failure], now: start))
    }

    /// The status is the receiver's number: whatever it sends, only 200...299 may wait for a batch.
    @Test(arguments: [0, -1, 1, 100, 199, 300, 302, 404, 999, 1000, Int.max, Int.min])
    func aStatusOutside2xxRingsAtOnce(status: Int) {
        let inbox = inbox(outstanding: 64)
        #expect(inbox.answered([answer(1, status: status)], now: start))
    }

    @Test(arguments: [200, 204, 299])
    func a2xxStatusIsHeld(status: Int) {
        let inbox = inbox(outstanding: 64)
        #expect(!inbox.answered([answer(1, status: status)], now: start))
    }

    @Test func everyAnswerRingsOnceFewAreOutstanding() {
        let inbox = inbox(outstanding: 18)
        #expect(!inbox.answered([answer(1)], now: start))  // 17 outstanding
        #expect(inbox.answered([answer(2)], now: start))  // 16: the engine needs its next attempts
        var taken: [DeliveryReceiver.Completion] = []
        inbox.take(into: &taken)
        #expect(inbox.answered([answer(3)], now: start))  // a low rate: nothing waits
    }

    @Test func aHeldAnswerRingsWithTheFirstAnswerAfterTheHoldLimit() {
        let inbox = inbox(outstanding: 64)
        #expect(!inbox.answered([answer(1)], now: start))
        #expect(!inbox.answered([answer(2)], now: start + .milliseconds(1)))  // measured from the oldest held
        #expect(inbox.answered([answer(3)], now: start + .milliseconds(2)))
        var taken: [DeliveryReceiver.Completion] = []
        inbox.take(into: &taken)
        #expect(!inbox.answered([answer(4)], now: start + .milliseconds(3)))  // the hold restarts after a take
        #expect(inbox.answered([answer(5)], now: start + .milliseconds(5)))
    }

    @Test func submissionsCountBeforeTheirAnswers() {
        let inbox = inbox(outstanding: 17)
        inbox.submitted(10)  // 27 outstanding
        for tag in 1...10 { #expect(!inbox.answered([answer(Int64(tag))], now: start)) }  // 17 left
        #expect(inbox.answered([answer(11)], now: start))
    }
}
