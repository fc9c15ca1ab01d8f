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
struct QueuedMessage: Decodable {
    var message_id: String
    var content_type: String?
    var delivery_mode: Int?
    var routing_key: String
    var headers: [String: String]
    var body: String
}

/// Runs Tests/tools/broker_peers/amqp_admin.py; fails the test when it fails.
@discardableResult
func amqpAdmin(_ arguments: [String]) async throws -> String {
    let result = try await BlockingExecutor.shared.perform {
        try PythonTool.run(script: "broker_peers/amqp_admin.py", arguments: arguments, timeout: 120)
    }
    try #require(result.status == 0, "amqp_admin.py \(arguments.first ?? ""): \(result.stderr)")
    return result.stdout
}

/// Every message of `queue`, taken out of it, in order.
func readQueue(_ broker: RabbitMQServer, _ queue: String) async throws -> [QueuedMessage] {
    try await amqpAdmin(["read", broker.url(), queue]).split(separator: "\n").map {
        try JSONDecoder().decode(QueuedMessage.self, from: Data($0.utf8))
    }
}
