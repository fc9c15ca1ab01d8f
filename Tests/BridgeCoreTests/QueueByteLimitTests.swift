import BridgeSystem
import Foundation
import Testing

@testable import BridgeCore
@testable import BridgeEvents
@testable import BridgeDirectus
@testable import BridgeActivity
@testable import BridgeSinks

/// The queue is bounded in bytes as well as in events (`delivery.max_queue_bytes`): large events fill it long
/// before `max_queue` does, and one event larger than the whole budget neither wedges nor traps it.
@Suite struct QueueByteLimitTests {
    /// An event whose line is `size` bytes.
    private func bigEvent(_ n: Int, size: Int) -> EncodedEvent {
        var event = makeEvent(n)
        event.body = EventBody([UInt8](repeating: UInt8(ascii: "x"), count: size))
        return event
    }

    @Test func offerRefusesOnceTheBytesAreFullLongBeforeTheEventLimit() {
        let queue = EventQueue(capacity: 100_000, maxBytes: 1 << 20)
        var accepted = 0
        for n in 0..<2_000 where queue.offer(EventBatch(events: [bigEvent(n, size: 64 << 10)])) { accepted += 1 }
        #expect(accepted == 15, "16 lines of 64 KiB plus their share pass 1 MiB")
        #expect(queue.depth == 15)
        #expect(queue.bytes <= queue.maxBytes)
        #expect(queue.bytes > 15 * (64 << 10), "each event counts its line and its share")
        // Taking makes room again, and the byte count goes back to zero.
        while queue.take(timeout: .milliseconds(1)) != nil {}
        #expect(queue.bytes == 0 && queue.depth == 0)
        #expect(queue.offer(EventBatch(events: [bigEvent(1, size: 64 << 10)])))
    }

    @Test func tinyEventsCountTheirFixedShare() {
        let queue = EventQueue(capacity: 10_000_000, maxBytes: 1 << 20)
        let empty = EventBatch(events: [bigEvent(0, size: 0)])
        #expect(EventQueue.byteCount(of: empty) >= MemoryLayout<EncodedEvent>.stride)
        var accepted = 0
        while queue.offer(empty), accepted < 1_000_000 { accepted += 1 }
        #expect(accepted < 1_000_000, "empty lines still fill the byte budget")
        #expect(queue.bytes <= queue.maxBytes)
    }

    @Test func anEventLargerThanTheWholeBudgetIsAdmittedAloneWhenTheQueueIsEmpty() async {
        let queue = EventQueue(capacity: 100_000, maxBytes: 1 << 20)
        let huge = EventBatch(events: [bigEvent(1, size: 4 << 20)])
        #expect(queue.offer(huge), "an empty queue takes it, alone")
        #expect(!queue.offer(EventBatch(events: [bigEvent(2, size: 10)])), "nothing joins it")
        #expect(queue.take(timeout: .milliseconds(10))?.events.first?.id == "evt_1")

        // Behind a small event, live mode's offer refuses it; activity mode's put waits until the queue is empty.
        #expect(queue.offer(EventBatch(events: [bigEvent(3, size: 10)])))
        #expect(!queue.offer(huge))
        async let admitted = queue.put(huge)
        try? await Task.sleep(for: .milliseconds(20))
        #expect(queue.depth == 1, "still waiting")
        #expect(queue.take(timeout: .milliseconds(10))?.events.first?.id == "evt_3")
        #expect(await admitted)
        #expect(queue.take(timeout: .seconds(1))?.events.first?.id == "evt_1")
        #expect(queue.bytes == 0)
    }

    @Test func putWaitsForBytesToBeTaken() async {
        let queue = EventQueue(capacity: 100_000, maxBytes: 1 << 20)
        #expect(queue.offer(EventBatch(events: [bigEvent(1, size: 900 << 10)])))
        async let second = queue.put(EventBatch(events: [bigEvent(2, size: 200 << 10)]))
        try? await Task.sleep(for: .milliseconds(20))
        #expect(queue.depth == 1 && queue.bytes < 1 << 20)
        #expect(queue.take(timeout: .milliseconds(10))?.events.first?.id == "evt_1")
        #expect(await second)
        #expect(queue.take(timeout: .seconds(1))?.events.first?.id == "evt_2")
    }
}
