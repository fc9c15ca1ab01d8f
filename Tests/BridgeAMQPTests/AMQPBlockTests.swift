import Testing

@testable import BridgeAMQP

/// What a blocked connection owes (`AMQPBlock`), without a broker: which late answers count as confirmations.
@Suite struct AMQPBlockTests {
    @Test func lateAcksConfirmOnceNacksAndReturnsDoNot() {
        var block = AMQPBlock()
        block.reason = "low on memory"
        block.giveUp([(5, "evt_a", false), (6, "evt_b", false), (7, "evt_c", true), (8, "evt_d", false)])
        #expect(block.isHolding)
        block.reason = nil
        #expect(block.isHolding, "still owed answers after the unblock")
        // One multiple ack for 5…7, one nack for 8; evt_c was returned (unroutable): not a confirmation.
        block.answered(7, multiple: true, nacked: false)
        block.answered(8, multiple: false, nacked: true)
        #expect(!block.isHolding)
        let taken = ["evt_a", "evt_b", "evt_a", "evt_c", "evt_d"].map { block.takeConfirmed($0) }
        // evt_a and evt_b confirmed, each once; evt_c returned and evt_d nacked are not.
        #expect(taken == [true, true, false, false, false])
    }

    @Test func answersOfTagsNotGivenUpOnChangeNothing() {
        var block = AMQPBlock()
        block.giveUp([(3, "evt_a", false)])
        block.returned(messageID: "evt_other")
        block.answered(2, multiple: true, nacked: false)
        block.answered(4, multiple: false, nacked: false)
        #expect(block.unanswered == [3: "evt_a"])
        block.returned(messageID: "evt_a")
        block.answered(3, multiple: false, nacked: false)
        let confirmed = block.takeConfirmed("evt_a")
        #expect(!block.isHolding && !confirmed, "returned, then acked: not confirmed")
    }
}
