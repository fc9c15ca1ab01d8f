import Foundation

/// Tests/tools/broker_peers/amqp_admin.py (pika) for the AMQP client and sink tests: declares and binds exchanges and
/// queues, and reads queues back. Blocking: call it from a test thread or `BlockingExecutor`.
public enum AMQPAdmin {
    /// One message as pika read it.
    public struct Message: Decodable, Sendable {
        public var message_id: String
        public var content_type: String?
        public var delivery_mode: Int?
        public var routing_key: String
        public var headers: [String: String]
        public var body: String
    }

    /// Runs amqp_admin.py with `arguments` (`setup URL EXCHANGE QUEUE BINDING_KEY`, `read URL QUEUE`); throws with
    /// its stderr when it fails.
    @discardableResult
    public static func run(_ arguments: [String]) throws -> String {
        let result = try PythonTool.run(script: "broker_peers/amqp_admin.py", arguments: arguments, timeout: 120)
        guard result.status == 0 else {
            throw BrokerServerError.exited(name: "amqp_admin.py \(arguments.first ?? "")", log: result.stderr)
        }
        return result.stdout
    }

    /// Every message of `queue` on `broker`, taken out of it, in order.
    public static func read(_ broker: RabbitMQServer, _ queue: String) throws -> [Message] {
        try run(["read", broker.url(), queue]).split(separator: "\n").map {
            try JSONDecoder().decode(Message.self, from: Data($0.utf8))
        }
    }
}
