import Foundation

/// One Kafka message as a real client (confluent-kafka) read it back.
public struct KafkaReadMessage: Decodable, Sendable {
    /// The partition.
    public var partition: Int
    /// The offset in its partition.
    public var offset: Int
    /// The key as text.
    public var key: String
    /// The headers, in order, as `[name, value]` pairs.
    public var headers: [[String]]
    /// The value as text.
    public var value: String
}

/// Reads a topic back with confluent-kafka (Tests/tools/broker_peers/kafka_read.py).
public enum KafkaTopicReader {
    /// Every message of `topic` on `servers`, once `expected` arrived (plus a second, so duplicates would show) or
    /// after `timeout` seconds (stretched by `TestEnvironment.patience`); `problem` says why the reader failed.
    /// Blocking: call it from a test thread or `BlockingExecutor`.
    /// With `idle`, it also stops once no message came for that many seconds: what the topic holds now.
    public static func read(servers: String, topic: String, expected: Int, timeout: Int = 90, idle: Double? = nil)
        throws -> (messages: [KafkaReadMessage], problem: String?)
    {
        let readerTimeout = Int(TestEnvironment.patient(TimeInterval(timeout)))
        let result = try PythonTool.run(
            script: "broker_peers/kafka_read.py",
            arguments: [servers, topic, String(expected), "--timeout", String(readerTimeout)]
                + (idle.map { ["--idle", String($0)] } ?? []),
            timeout: TimeInterval(timeout + 30)  // stretched by PythonTool, so it outlasts the reader's own
        )
        struct Output: Decodable { var messages: [KafkaReadMessage] }
        guard result.status == 0, let line = result.stdout.split(separator: "\n").last,
            let output = try? JSONDecoder().decode(Output.self, from: Data(line.utf8))
        else {
            return ([], "kafka_read.py failed (\(result.status)): \(result.stderr.suffix(2000))")
        }
        return (output.messages, nil)
    }
}
