import BridgeSystem
import Foundation

/// One message as paho-mqtt received it (Tests/tools/broker_peers/mqtt_read.py).
public struct ReceivedMQTTMessage: Decodable, Sendable {
    public var topic: String
    public var payload: String
    public var retain: Bool
    public var qos: Int
    public var properties: [String: String]
}

extension MosquittoServer {
    /// A paho-mqtt subscriber to `topic` with a persistent session (`clientID`), subscribed once this returns.
    public func followReader(topic: String, clientID: String = "bridge-test-reader") throws -> PythonServer {
        try PythonServer(script: "broker_peers/mqtt_read.py", arguments: followArguments(topic, clientID))
    }

    /// `followReader` started on `BlockingExecutor.shared`, for async tests (`PythonServer.start`).
    public func followReader(topic: String, clientID: String = "bridge-test-reader") async throws -> PythonServer {
        try await PythonServer.start(script: "broker_peers/mqtt_read.py", arguments: followArguments(topic, clientID))
    }

    private func followArguments(_ topic: String, _ clientID: String) -> [String] {
        [url(), topic, "follow", "--client-id", clientID] + (certificates.map { ["--ca", $0.ca] } ?? [])
    }

    /// What a new clean subscriber to `topic` receives (retained messages) before the broker falls silent.
    public func snapshot(topic: String) throws -> [ReceivedMQTTMessage] {
        let arguments = [url(), topic, "snapshot"] + (certificates.map { ["--ca", $0.ca] } ?? [])
        let result = try PythonTool.run(script: "broker_peers/mqtt_read.py", arguments: arguments, timeout: 60)
        guard result.status == 0 else { throw BrokerServerError.exited(name: "mqtt_read.py", log: result.stderr) }
        return result.stdout.split(separator: "\n").compactMap {
            try? JSONDecoder().decode(ReceivedMQTTMessage.self, from: Data($0.utf8))
        }
    }
}

/// Every message `reader` printed, in the order it received them.
public func receivedMQTTMessages(_ reader: PythonServer) -> [ReceivedMQTTMessage] {
    reader.log.split(separator: "\n").filter { $0.hasPrefix("{") }.compactMap {
        try? JSONDecoder().decode(ReceivedMQTTMessage.self, from: Data($0.utf8))
    }
}
