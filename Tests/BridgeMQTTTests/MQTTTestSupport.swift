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

/// A started broker in a new temporary directory.
func startedMosquitto(tls: Bool = false, users: [String: String] = [:]) async throws -> MosquittoServer {
    // With `tls` the initializer makes certificates with a child process: off the cooperative pool.
    let broker = try await BlockingExecutor.shared.perform {
        try MosquittoServer(
            in: try TestEnvironment.makeTemporaryDirectory(prefix: "mosquitto"),
            tls: tls,
            users: users
        )
    }
    try await broker.start()
    return broker
}

/// The messages `reader` printed, by their `id` property.
func receivedMessages(_ reader: PythonServer) -> [String: ReceivedMQTTMessage] {
    var messages: [String: ReceivedMQTTMessage] = [:]
    for message in receivedMQTTMessages(reader) { messages[message.properties["id"] ?? message.payload] = message }
    return messages
}

/// Waits (60 s, stretched) until `reader` received `count` distinct ids; fails the test otherwise.
func waitForIDs(_ reader: PythonServer, count: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws
    -> [String: ReceivedMQTTMessage]
{
    _ = await pollUntil(timeout: .seconds(60)) { receivedMessages(reader).count >= count }
    let received = receivedMessages(reader)
    #expect(received.count == count, "received \(received.count) of \(count)", sourceLocation: sourceLocation)
    return received
}

/// What a new clean subscriber to `topic` receives (retained messages) before the broker falls silent.
func mqttSnapshot(_ broker: MosquittoServer, topic: String) async throws -> [ReceivedMQTTMessage] {
    try await BlockingExecutor.shared.perform { try broker.snapshot(topic: topic) }
}
