import Foundation

/// Runs `rabbitmqctl` against `broker`'s node (its Erlang cookie is in the node's home); throws when it fails.
public func rabbitmqctl(_ broker: RabbitMQServer, _ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/lib/rabbitmq/bin/rabbitmqctl")
    process.arguments = ["-n", broker.nodeName] + arguments
    process.environment = TestEnvironment.helperEnvironment(["HOME": broker.directory.path])
    let output = broker.directory.appendingPathComponent("rabbitmqctl.out")
    FileManager.default.createFile(atPath: output.path, contents: nil)
    let handle = try FileHandle(forWritingTo: output)
    defer { try? handle.close() }
    process.standardOutput = handle
    process.standardError = handle
    try process.run()
    guard ChildExit.wait(process, timeout: TestEnvironment.patient(120)) == 0 else {
        let log = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        throw BrokerServerError.exited(name: "rabbitmqctl \(arguments.first ?? "")", log: log)
    }
}
