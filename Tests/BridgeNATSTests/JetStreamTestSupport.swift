import BridgeNATS
import BridgeSystem
import BridgeTestSupport
import Foundation
import Synchronization
import Testing

/// Event-shaped JetStream messages: subject per collection/event, `Nats-Msg-Id` = event id, ordered per item.
func jetStreamMessages(count: Int, items: Int, prefix: String = "evt") -> [JetStreamMessage] {
    (0..<count).map { index in
        let key = "item-\(index % items)"
        let id = "\(prefix)_\(String(format: "%06d", index))"
        let payload = """
            {"id":"\(id)","type":"items.update","collection":"articles","event":"update","key":"\(key)",\
            "seq":\(index),"data":{"id":"\(key)","title":"Article \(index)",\
            "body":"\(String(repeating: "lorem ", count: 40))"}}
            """
        return JetStreamMessage(
            subject: "directus.articles.update",
            messageID: id,
            orderingKey: key,
            payload: Array(payload.utf8)
        )
    }
}

/// Creates the stream EVENTS on `servers` (comma-separated) taking `directus.>`, with a 2-minute duplicate window.
func createStream(_ servers: String, replicas: Int) async throws {
    let result = try await natsAdmin(["create-stream", servers, "EVENTS", "directus.>", "--replicas", String(replicas)])
    try #require(result.status == 0, "create-stream: \(result.stderr)")
}

/// A started single nats-server named `name` with the stream EVENTS, and a connection to it (pinging every
/// `pingInterval` when given: a test that freezes the server sets it long, or the connection is found dead).
func singleServerWithStream(_ name: String, pingInterval: Duration? = nil) async throws -> (NATSServer, NATSConnection)
{
    let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "nats")
    let server = try NATSServer(name: name, in: directory)
    try await server.start()
    try await createStream(server.url, replicas: 1)
    var settings = NATSSettings(servers: [server.url])
    if let pingInterval { settings.pingInterval = pingInterval }
    let connection = try await NATSConnection.connect(settings: settings, logger: .silent)
    return (server, connection)
}

/// One stored message as nats-py read it.
struct StoredMessage: Decodable {
    var seq: Int
    var subject: String
    var msg_id: String
    var data: String
}

/// Checks the stream EVENTS holds each of `messages` exactly once, with its id, subject and payload, and that each
/// item's messages are stored in the order submitted.
func expectStored(
    _ servers: String,
    exactly messages: [JetStreamMessage],
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let result = try await natsAdmin(["read-stream", servers, "EVENTS"])
    struct Output: Decodable { var messages: [StoredMessage] }
    let line = try #require(
        result.stdout.split(separator: "\n").last,
        "read-stream: \(result.stderr)",
        sourceLocation: sourceLocation
    )
    let stored = try JSONDecoder().decode(Output.self, from: Data(line.utf8)).messages
    let sent = Dictionary(uniqueKeysWithValues: messages.map { ($0.messageID, $0) })
    #expect(
        stored.count == messages.count,
        "stored \(stored.count) of \(messages.count)",
        sourceLocation: sourceLocation
    )
    #expect(Set(stored.map(\.msg_id)).count == stored.count, "an id stored twice", sourceLocation: sourceLocation)
    var orderPerKey: [String: [String]] = [:]
    for message in stored {
        guard let original = sent[message.msg_id] else {
            Issue.record("stored an id never sent: \(message.msg_id)", sourceLocation: sourceLocation)
            continue
        }
        #expect(
            message.subject == original.subject && message.data == String(decoding: original.payload, as: UTF8.self),
            sourceLocation: sourceLocation
        )
        orderPerKey[original.orderingKey ?? "", default: []].append(message.msg_id)
    }
    var expectedPerKey: [String: [String]] = [:]
    for message in messages { expectedPerKey[message.orderingKey ?? "", default: []].append(message.messageID) }
    for (key, ids) in expectedPerKey where orderPerKey[key] != nil {
        #expect(orderPerKey[key] == ids, "item \(key) stored out of order", sourceLocation: sourceLocation)
    }
}

/// Publishes a stream of messages in batches (one batch submitted after another without waiting), counting
/// acknowledgements as they come.
final class StreamRun: Sendable {
    private let counts = Mutex<(acknowledged: Int, failures: [NATSError])>((0, []))

    var acknowledged: Int { counts.withLock { $0.acknowledged } }
    var failures: [NATSError] { counts.withLock { $0.failures } }

    func publish(_ messages: [JetStreamMessage], with publisher: JetStreamPublisher, batchSize: Int) async throws {
        let remaining = Mutex(0)
        var start = 0
        while start < messages.count {
            let batch = Array(messages[start..<min(start + batchSize, messages.count)])
            remaining.withLock { $0 += 1 }
            try await publisher.submit(batch) { [self] outcomes in
                counts.withLock { counts in
                    counts.acknowledged += outcomes.filter { $0.ack != nil }.count
                    counts.failures += outcomes.compactMap(\.error)
                }
                remaining.withLock { $0 -= 1 }
            }
            start += batchSize
        }
        _ = await pollUntil(timeout: .seconds(120)) { remaining.withLock { $0 == 0 } }
    }
}

/// Collects one batch's outcomes; tests wait on it.
final class NATSOutcomeBox: Sendable {
    private let state = Mutex<[JetStreamOutcome]?>(nil)

    func store(_ outcomes: [JetStreamOutcome]) { state.withLock { $0 = outcomes } }

    var outcomes: [JetStreamOutcome]? { state.withLock { $0 } }

    func wait(timeout: Duration) async -> [JetStreamOutcome]? {
        _ = await pollUntil(timeout: timeout) { outcomes != nil }
        return outcomes
    }
}

/// Hands a non-Sendable value to a child task the test joins before the value is used elsewhere.
struct UnsafeTransfer<Value>: @unchecked Sendable {
    let value: Value
}

/// The first failure, for expectation messages.
func natsFailure(_ outcomes: [JetStreamOutcome]) -> Comment {
    Comment(rawValue: outcomes.compactMap(\.error).first.map { "\($0)" } ?? "")
}
