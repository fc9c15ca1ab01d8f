import BridgeMQTT
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// Event-shaped messages on `directus/articles/update`: user properties id, type, key; ids `evt_<n>`.
func mqttMessages(count: Int, items: Int) -> [MQTTMessage] {
    (0..<count).map { index in
        let key = "item-\(index % items)"
        let id = "evt_\(String(format: "%06d", index))"
        let payload = "{\"id\":\"\(id)\",\"type\":\"items.update\",\"key\":\"\(key)\",\"seq\":\(index)}"
        return MQTTMessage(
            topic: "directus/articles/update",
            payload: Array(payload.utf8),
            userProperties: [.init("id", id), .init("type", "items.update"), .init("key", key)]
        )
    }
}

/// One message as paho-mqtt received it.
struct ReceivedMessage: Decodable {
    var topic: String
    var payload: String
    var retain: Bool
    var qos: Int
    var properties: [String: String]
}

/// A started broker in a new temporary directory.
func startedMosquitto(tls: Bool = false, users: [String: String] = [:]) throws -> MosquittoServer {
    let broker = try MosquittoServer(
        in: try TestEnvironment.makeTemporaryDirectory(prefix: "mosquitto"),
        tls: tls,
        users: users
    )
    try broker.start()
    return broker
}

/// A paho-mqtt subscriber with a persistent session, subscribed to `topic` once this returns.
func followReader(_ broker: MosquittoServer, topic: String) throws -> PythonServer {
    try PythonServer(
        script: "broker_peers/mqtt_read.py",
        arguments: [broker.url(), topic, "follow"] + (broker.certificates.map { ["--ca", $0.ca] } ?? [])
    )
}

/// The messages `reader` printed, by their `id` property.
func receivedMessages(_ reader: PythonServer) -> [String: ReceivedMessage] {
    var messages: [String: ReceivedMessage] = [:]
    for line in reader.log.split(separator: "\n") where line.hasPrefix("{") {
        guard let message = try? JSONDecoder().decode(ReceivedMessage.self, from: Data(line.utf8)) else { continue }
        messages[message.properties["id"] ?? message.payload] = message
    }
    return messages
}

/// Waits (60 s, stretched) until `reader` received `count` distinct ids; fails the test otherwise.
func waitForIDs(_ reader: PythonServer, count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws
    -> [String: ReceivedMessage]
{
    _ = await pollUntil(timeout: .seconds(60)) { receivedMessages(reader).count >= count }
    let received = receivedMessages(reader)
    #expect(received.count == count, "received \(received.count) of \(count)", sourceLocation: sourceLocation)
    return received
}

/// What a new clean subscriber to `topic` receives (retained messages) before the broker falls silent.
func mqttSnapshot(_ broker: MosquittoServer, topic: String) async throws -> [ReceivedMessage] {
    let arguments = [broker.url(), topic, "snapshot"] + (broker.certificates.map { ["--ca", $0.ca] } ?? [])
    let result = try await BlockingExecutor.shared.perform {
        try PythonTool.run(script: "broker_peers/mqtt_read.py", arguments: arguments, timeout: 60)
    }
    try #require(result.status == 0, "mqtt_read.py: \(result.stderr)")
    return result.stdout.split(separator: "\n").compactMap {
        try? JSONDecoder().decode(ReceivedMessage.self, from: Data($0.utf8))
    }
}
