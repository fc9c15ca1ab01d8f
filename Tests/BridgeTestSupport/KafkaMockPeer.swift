import BridgeSystem
import Foundation

/// librdkafka's mock Kafka cluster in a helper process of its own (Tests/tools/broker_peers/kafka_mock.py): brokers
/// on loopback TCP ports that any Kafka client reaches through `bootstrapServers`, controlled by one command per
/// call (a broker down or up, a leader move, injected produce errors).
///
/// A process of its own because librdkafka 2.0.2's mock aborts the process hosting it when a broker that comes back
/// up cannot bind its old port again (another process may have taken it meanwhile): that now ends the helper, and
/// the test that asked fails with `KafkaMockError`, instead of the whole test process. The helper exits with the
/// test process however that ends.
public final class KafkaMockPeer: @unchecked Sendable {
    // @unchecked: commands are sent one at a time under `lock`; the rest is immutable after init.
    private let process = Process()
    private let input: FileHandle
    private let output: FileHandle
    private var buffer = Data()
    private let lock = NSLock()
    /// `host:port,host:port,…` of the brokers.
    public let bootstrapServers: String
    /// The number of brokers (ids 1...brokerCount).
    public let brokerCount: Int

    /// Starts a cluster of `brokers` brokers.
    public init(brokers: Int) throws {
        precondition(brokers >= 1 && brokers <= 32, "a mock cluster has 1...32 brokers")
        process.executableURL = URL(fileURLWithPath: TestEnvironment.python)
        process.arguments = ["-u", TestEnvironment.tool("broker_peers/kafka_mock.py"), String(brokers)]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading
        brokerCount = brokers
        var first = ""
        while first.isEmpty, let line = Self.readLine(from: output, buffer: &buffer) { first = line }
        guard first.hasPrefix("BOOTSTRAP ") else {
            process.terminate()
            throw KafkaMockError(message: "the mock cluster did not start: \(first)")
        }
        bootstrapServers = String(first.dropFirst("BOOTSTRAP ".count))
    }

    /// `init` on `BlockingExecutor.shared`, for async tests: the wait for the helper's first line (a Python and
    /// librdkafka start-up, seconds on a loaded machine) would otherwise hold one of the cooperative pool's two
    /// threads (`PythonServer.start`).
    public static func start(brokers: Int) async throws -> KafkaMockPeer {
        try await BlockingExecutor.shared.perform { try KafkaMockPeer(brokers: brokers) }
    }

    /// Ends the helper and waits for its exit on `BlockingExecutor.shared`: the last reference often goes on the
    /// cooperative pool.
    deinit {
        try? input.close()  // the helper exits at end of input
        let process = process
        BlockingExecutor.shared.submit { ChildExit.wait(process) }
    }

    /// Creates `topic` with `partitions` partitions, each replicated on `replicationFactor` brokers.
    public func createTopic(_ topic: String, partitions: Int, replicationFactor: Int) throws {
        try command("topic \(topic) \(partitions) \(replicationFactor)")
    }

    /// Makes `broker` the leader of `topic`'s `partition`.
    public func setLeader(topic: String, partition: Int32, broker: Int32) throws {
        try command("leader \(topic) \(partition) \(broker)")
    }

    /// Disconnects `broker` and refuses new connections to it (leaders do not move).
    public func setBrokerDown(_ broker: Int32) throws { try command("down \(broker)") }

    /// Lets `broker` accept connections again.
    public func setBrokerUp(_ broker: Int32) throws { try command("up \(broker)") }

    /// Delays every answer of `broker` by `milliseconds`.
    public func setRoundTripTime(broker: Int32, milliseconds: Int) throws {
        try command("rtt \(broker) \(milliseconds)")
    }

    /// The next `codes.count` produce requests (to any broker) fail with these librdkafka error codes, in order.
    public func failNextProduceRequests(with codes: [Int32]) throws {
        try command("errors " + codes.map(String.init).joined(separator: ","))
    }

    /// `createTopic` on `BlockingExecutor.shared`, for async tests: each command waits for the helper's answer, a
    /// moment on a quiet machine but seconds on a loaded one, which would hold one of the cooperative pool's threads.
    public func createTopic(_ topic: String, partitions: Int, replicationFactor: Int) async throws {
        try await command("topic \(topic) \(partitions) \(replicationFactor)")
    }

    /// `setLeader` on `BlockingExecutor.shared`, for async tests.
    public func setLeader(topic: String, partition: Int32, broker: Int32) async throws {
        try await command("leader \(topic) \(partition) \(broker)")
    }

    /// `setBrokerDown` on `BlockingExecutor.shared`, for async tests.
    public func setBrokerDown(_ broker: Int32) async throws { try await command("down \(broker)") }

    /// `setBrokerUp` on `BlockingExecutor.shared`, for async tests.
    public func setBrokerUp(_ broker: Int32) async throws { try await command("up \(broker)") }

    /// `failNextProduceRequests` on `BlockingExecutor.shared`, for async tests.
    public func failNextProduceRequests(with codes: [Int32]) async throws {
        try await command("errors " + codes.map(String.init).joined(separator: ","))
    }

    private func command(_ line: String) async throws {
        try await BlockingExecutor.shared.perform { try self.command(line) }
    }

    private func command(_ line: String) throws {
        try lock.withLock {
            do {
                try input.write(contentsOf: Data((line + "\n").utf8))
            } catch {
                throw KafkaMockError(message: "the mock cluster is gone (\(line)): \(error)")
            }
            guard let reply = Self.readLine(from: output, buffer: &buffer) else {
                throw KafkaMockError(message: "the mock cluster died during \"\(line)\" (librdkafka aborted it)")
            }
            guard reply == "OK" else { throw KafkaMockError(message: "\(line): \(reply)") }
        }
    }

    /// The next line of `handle`, nil at end of file.
    private static func readLine(from handle: FileHandle, buffer: inout Data) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }
}

/// The mock cluster refused a command or is gone.
public struct KafkaMockError: Error, CustomStringConvertible {
    /// What happened.
    public var message: String
    public var description: String { message }
}
