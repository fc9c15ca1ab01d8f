import BridgeConfig
import BridgeEvents
import BridgeJSON
import BridgeSystem
import BridgeTestSupport
import Synchronization
import Testing

@testable import BridgeSinks

/// The Kafka sink's messages as a consumer reads them (confluent-kafka, from librdkafka's mock cluster): the event's
/// key, its line as value, and the contract's headers in order, names and values, for a text id and a live one.
@Suite(.onASinkRunnerThread) struct KafkaBrokerClientTests {
    static let topic = "headers"

    static func event(_ identifier: EventIdentifier, _ event: ChangeEvent, collection: String, key: String)
        -> EncodedEvent
    {
        EncodedEvent(
            identifier: identifier,
            event: event,
            collection: collection,
            key: key,
            origin: .live,
            seq: nil,
            time: Timestamp(microsecondsSinceEpoch: 0),
            receivedAt: Timestamp(microsecondsSinceEpoch: 0),
            subscription: collection,
            body: EventBody(Array("{\"key\":\"\(key)\"}".utf8))
        )
    }

    @Test(arguments: EventFormat.allCases)
    func eachMessageCarriesItsEventsKeyLineAndHeadersInOrder(format: EventFormat) async throws {
        let cluster = try KafkaMockPeer(brokers: 1)
        try await cluster.createTopic(Self.topic, partitions: 1, replicationFactor: 1)
        let encoder = EventEncoder(format: format, source: "test")
        let client = try KafkaBrokerClient.open(
            KafkaSinkConfig(brokers: [cluster.bootstrapServers], topic: Self.topic),
            sinkName: "kafka",
            encoder: encoder,
            logger: .silent
        )
        let live = UUIDv7(milliseconds: 1_700_000_000_000, randA: 0x123, randB: 0x2_0000_0000_0abc)
        let events = [
            Self.event(.text("act_42_sub"), .update, collection: "articles", key: "7"),
            Self.event(.live(live), .create, collection: "a_much_longer_collection_name", key: "8"),
            Self.event(.text("snap_articles_9_2024-01-01T00:00:00.000000Z"), .delete, collection: "x", key: "9"),
        ]
        let delivered = Atomic<Int>(-1)
        try await client.submit(events) { outcomes in
            delivered.store(outcomes.allDelivered ? outcomes.count : 0, ordering: .releasing)
        }
        #expect(
            await pollUntil {
                client.serveOutcomes(waitingAtMost: .milliseconds(50)) && delivered.load(ordering: .acquiring) >= 0
            }
        )
        client.handOutcomesBack()
        #expect(delivered.load(ordering: .acquiring) == events.count)
        await client.close(drainTimeout: .seconds(5))
        let read = try KafkaTopicReader.read(
            servers: cluster.bootstrapServers,
            topic: Self.topic,
            expected: events.count
        )
        #expect(read.problem == nil)
        #expect(read.messages.map(\.key) == ["7", "8", "9"])
        #expect(read.messages.map(\.value) == events.map { String(decoding: $0.body.slice, as: UTF8.self) })
        let contentType = format == .cloudevents ? [["content-type", "application/cloudevents+json"]] : []
        #expect(
            read.messages.map(\.headers) == [
                [
                    ["id", "act_42_sub"], ["type", "directus.items.update"], ["collection", "articles"],
                    ["event", "update"],
                ] + contentType,
                [
                    ["id", "evt_" + live.description], ["type", "directus.items.create"],
                    ["collection", "a_much_longer_collection_name"], ["event", "create"],
                ] + contentType,
                [
                    ["id", "snap_articles_9_2024-01-01T00:00:00.000000Z"], ["type", "directus.items.delete"],
                    ["collection", "x"], ["event", "delete"],
                ] + contentType,
            ]
        )
    }
}
