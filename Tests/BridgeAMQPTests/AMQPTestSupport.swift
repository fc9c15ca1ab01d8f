import BridgeAMQP
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// Event-shaped messages routed `articles.update`, ids `evt_<n>`, the contract's headers.
func amqpMessages(count: Int, exchange: String) -> [AMQPMessage] {
    (0..<count).map { index in
        let key = "item-\(index % 10)"
        let id = "evt_\(String(format: "%06d", index))"
        return AMQPMessage(
            exchange: exchange,
            routingKey: "articles.update",
            messageID: id,
            headers: [
                .init("type", "items.update"), .init("collection", "articles"), .init("key", key),
                .init("event", "update"),
            ],
            body: Array("{\"id\":\"\(id)\",\"key\":\"\(key)\",\"seq\":\(index)}".utf8)
        )
    }
}

/// One message as pika read it.
typealias QueuedMessage = AMQPAdmin.Message

/// Runs Tests/tools/broker_peers/amqp_admin.py off the cooperative pool; fails the test when it fails.
@discardableResult
func amqpAdmin(_ arguments: [String]) async throws -> String {
    try await BlockingExecutor.shared.perform { try AMQPAdmin.run(arguments) }
}

/// Every message of `queue`, taken out of it, in order.
func readQueue(_ broker: RabbitMQServer, _ queue: String) async throws -> [QueuedMessage] {
    try await BlockingExecutor.shared.perform { try AMQPAdmin.read(broker, queue) }
}
