import BridgeKafka
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// Messages shaped like the bridge's events: key = item key, headers id/type/collection/event, a ~400-byte JSON value.
func eventMessages(topic: String, count: Int, items: Int, prefix: String = "evt") -> [KafkaMessage] {
    (0..<count).map { index in
        let key = "item-\(index % items)"
        let id = "\(prefix)_\(String(format: "%06d", index))"
        let value = """
            {"id":"\(id)","type":"items.update","collection":"articles","event":"update","key":"\(key)",\
            "seq":\(index),"data":{"id":"\(key)","title":"Article \(index) with \\"quotes\\" and ünïcode",\
            "body":"\(String(repeating: "lorem ipsum ", count: 22))","tags":["a","b"],"rating":4.5,"draft":null}}
            """
        return KafkaMessage(
            topic: topic,
            key: key,
            headers: [
                KafkaHeader(name: "id", value: id), KafkaHeader(name: "type", value: "items.update"),
                KafkaHeader(name: "collection", value: "articles"), KafkaHeader(name: "event", value: "update"),
            ],
            value: Array(value.utf8)
        )
    }
}

/// One message as the Python reader (confluent-kafka) saw it.
typealias ReadMessage = KafkaReadMessage

/// Reads `topic` back with confluent-kafka.
func readTopic(_ cluster: KafkaMockPeer, topic: String, expected: Int) async throws -> [ReadMessage] {
    let servers = cluster.bootstrapServers
    let read = try await BlockingExecutor.shared.perform {
        try KafkaTopicReader.read(servers: servers, topic: topic, expected: expected)
    }
    if let problem = read.problem { Issue.record(Comment(rawValue: problem)) }
    return read.messages
}

/// Checks that `read` holds exactly `sent` (nothing missing, nothing twice), with their keys, headers and values,
/// and that every key's messages came back in the order they were produced.
func expectSameMessages(_ read: [ReadMessage], sent: [KafkaMessage], sourceLocation: SourceLocation = #_sourceLocation)
{
    let sentByValue = Dictionary(uniqueKeysWithValues: sent.map { (String(decoding: $0.value, as: UTF8.self), $0) })
    var seen = Set<String>()
    var orderPerKey: [String: [String]] = [:]
    for message in read {
        #expect(
            seen.insert(message.value).inserted,
            "read twice: \(message.value.prefix(40))",
            sourceLocation: sourceLocation
        )
        guard let original = sentByValue[message.value] else {
            Issue.record(
                "read a message that was never sent: \(message.value.prefix(60))",
                sourceLocation: sourceLocation
            )
            continue
        }
        #expect(message.key == original.key, sourceLocation: sourceLocation)
        #expect(message.headers == original.headers.map { [$0.name, $0.value] }, sourceLocation: sourceLocation)
        orderPerKey[message.key, default: []].append(message.value)
    }
    #expect(seen.count == sent.count, "read \(seen.count) of \(sent.count) messages", sourceLocation: sourceLocation)
    var sentPerKey: [String: [String]] = [:]
    for message in sent { sentPerKey[message.key, default: []].append(String(decoding: message.value, as: UTF8.self)) }
    for (key, values) in sentPerKey where orderPerKey[key] != nil {
        #expect(orderPerKey[key] == values, "key \(key) came back out of order", sourceLocation: sourceLocation)
    }
    // Per partition, offsets only grow in the order read.
    var lastOffset: [Int: Int] = [:]
    for message in read {
        #expect(message.offset > lastOffset[message.partition, default: -1], sourceLocation: sourceLocation)
        lastOffset[message.partition] = message.offset
    }
}

/// A producer for `cluster` with test-sized settings.
func makeProducer(
    _ servers: String,
    maxOutstanding: Int = 50_000,
    properties: [String: String] = [:]
) throws -> KafkaProducer {
    try KafkaProducer.make(
        settings: KafkaProducerSettings(
            bootstrapServers: [servers],
            properties: properties.merging(["linger.ms": "2"]) { old, _ in old },
            maxOutstanding: maxOutstanding
        ),
        logger: .silent
    )
}

/// A one-broker cluster with `topic` (2 partitions) and a producer for it with at most ten messages outstanding, for
/// tests of a submitting thread at the bound (keep the cluster as long as the producer).
func boundedProducer(topic: String) async throws -> (KafkaMockPeer, KafkaProducer) {
    let cluster = try await KafkaMockPeer.start(brokers: 1)
    try await cluster.createTopic(topic, partitions: 2, replicationFactor: 1)
    return (cluster, try makeProducer(cluster.bootstrapServers, maxOutstanding: 10))
}

/// librdkafka's numbers for `codes`, for the mock cluster's error injection.
func codes(_ codes: KafkaError.Code...) -> [Int32] { codes.map(\.rawValue) }

/// For tests that make produce requests fail: one request in flight per broker. librdkafka 2.0.2's mock does not
/// check idempotent sequences the way a broker does: it stores a later batch while an earlier one failed (a real
/// broker answers OUT_OF_ORDER_SEQUENCE_NUMBER), so the retried batch gets DUPLICATE_SEQUENCE_NUMBER, which
/// librdkafka 2.0.2 counts as delivered although the mock never stored it (a message "delivered" and missing, in
/// about one run of ten with 5 in flight; none in 25 runs with 1). The default of 5 is what a real cluster gets.
let mockSafe = ["max.in.flight.requests.per.connection": "1"]
