import BridgeAMQP
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// A memory alarm, on a node of its own (an alarm stops every publisher of the node: the suite's shared one must go
/// on taking publishes).
@Suite(.timeLimit(.minutes(8)))
struct AMQPAlarmTests {
    /// RabbitMQ stops reading publishes while a memory alarm is on (`connection.blocked`) and stores them once it
    /// clears. Publishes given up on after the confirm timeout and sent again on a new connection were stored once
    /// per connection that carried them (500 of 50,265 snapshot events twice after a two-minute alarm, with the
    /// release binary).
    @Test func publishesHeldByAMemoryAlarmAreStoredOnceWhenItClears() async throws {
        let broker = try RabbitMQServer(in: try TestEnvironment.makeTemporaryDirectory(prefix: "rabbitmq-alarm"))
        try await broker.start()
        try await amqpAdmin(["setup", broker.url(), "events-m", "queue-m", "#"])
        let client = AMQPClient(settings: try AMQPSettings(url: broker.url(), maxInFlight: 100))
        let messages = amqpMessages(count: 600, exchange: "events-m")
        // The connection is open and in use when the alarm goes off.
        let before = try await client.publish(Array(messages[0..<100]), timeout: .seconds(10))
        #expect(before.allSatisfy { $0.isConfirmed })
        try await BlockingExecutor.shared.perform {
            try rabbitmqctl(broker, ["set_vm_memory_high_watermark", "0.0001"])
        }
        var next = 100
        var failures: [String] = []
        var lifted = false
        while next < messages.count {
            if failures.count >= 3 && !lifted {
                lifted = true
                try await BlockingExecutor.shared.perform {
                    try rabbitmqctl(broker, ["set_vm_memory_high_watermark", "0.4"])
                }
            }
            let batch = Array(messages[next..<min(messages.count, next + 100)])
            let outcomes = try await client.publish(batch, timeout: .seconds(2))
            if let failed = outcomes.first(where: { !$0.isConfirmed }) {
                failures.append("\(failed)")
            } else {
                next += batch.count
            }
        }
        #expect(lifted, "the alarm never held a publish")
        // The broker said why: the error names the block, not only a missing confirm.
        #expect(failures.first?.contains("blocks publishing") == true, "\(failures.first ?? "")")
        // Each message stored once, in order: the copies held by the alarm, never a second one.
        let stored = try await readQueue(broker, "queue-m").map(\.message_id)
        let storedOnceInOrder = stored == messages.map(\.messageID)
        #expect(storedOnceInOrder, "\(stored.count) stored of \(messages.count), \(Set(stored).count) distinct")
        await client.close()
    }
}
