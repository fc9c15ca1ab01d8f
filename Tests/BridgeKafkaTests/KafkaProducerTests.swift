import BridgeKafka
import BridgeSystem
import BridgeTestSupport
import Synchronization
import Testing

/// The producer against librdkafka's mock cluster (3 brokers on loopback TCP, in a helper process: `KafkaMockPeer`),
/// read back with a real client (confluent-kafka, in a Python process) to check what the brokers really stored.
@Suite(.timeLimit(.minutes(5)))
struct KafkaProducerTests {
    @Test func producesKeysHeadersAndValuesInOrderPerKey() async throws {
        let cluster = try await KafkaMockPeer.start(brokers: 3)
        try await cluster.createTopic("events", partitions: 4, replicationFactor: 3)
        let producer = try makeProducer(cluster.bootstrapServers)
        let messages = eventMessages(topic: "events", count: 2_000, items: 50)

        let outcomes = try await producer.send(messages)
        #expect(outcomes.count == messages.count)
        #expect(allDelivered(outcomes), firstFailure(outcomes))
        // Offsets per partition grow in submission order: what the reports say matches the order produced.
        var last: [Int32: Int64] = [:]
        for outcome in outcomes {
            guard case .delivered(let partition, let offset) = outcome else { continue }
            #expect(partition >= 0 && partition < 4)
            #expect(offset > last[partition, default: -1])
            last[partition] = offset
        }
        #expect(producer.status.delivered == 2_000 && producer.status.outstanding == 0)

        let read = try await readTopic(cluster, topic: "events", expected: messages.count)
        expectSameMessages(read, sent: messages)
        await producer.close(drainTimeout: .seconds(5))
    }

    @Test func describeTopicReportsPartitionsAndAnUnreachableClusterIsRetriable() async throws {
        let cluster = try await KafkaMockPeer.start(brokers: 3)
        try await cluster.createTopic("described", partitions: 6, replicationFactor: 2)
        let producer = try makeProducer(cluster.bootstrapServers)
        let description = try await producer.describeTopic("described", timeout: .seconds(20))
        #expect(description.partitionCount == 6 && description.brokerCount == 3)
        await #expect(throws: KafkaError.self) { try await producer.describeTopic("bad topic!", timeout: .seconds(1)) }
        await producer.close(drainTimeout: .seconds(1))

        let nowhere = try makeProducer("127.0.0.1:1")
        do {
            _ = try await nowhere.describeTopic("described", timeout: .milliseconds(500))
            Issue.record("metadata from a cluster that does not exist")
        } catch let error as KafkaError {
            #expect(error.isRetriable, "\(error)")
        }
        await nowhere.close(drainTimeout: .zero)
    }

    @Test func aBrokerDownHoldsItsPartitionsUntilItIsBack() async throws {
        let cluster = try await KafkaMockPeer.start(brokers: 3)
        try await cluster.createTopic("down", partitions: 3, replicationFactor: 3)
        for partition in Int32(0)..<3 {
            try await cluster.setLeader(topic: "down", partition: partition, broker: partition + 1)
        }
        let producer = try makeProducer(cluster.bootstrapServers, properties: mockSafe)
        // Connected first, so the broker going down is a running producer losing a leader.
        #expect(
            allDelivered(try await producer.send(eventMessages(topic: "down", count: 30, items: 30, prefix: "warm")))
        )

        try await cluster.setBrokerDown(1)
        let messages = eventMessages(topic: "down", count: 900, items: 90)
        let done = OutcomeBox()
        try await producer.submit(messages) { done.store($0) }
        // The other two leaders take their share; broker 1's partition waits (no timeout: retried forever).
        let waiting = await pollUntil(timeout: .seconds(60)) {
            let status = producer.status
            return status.delivered >= 30 + 300 && status.outstanding > 0
        }
        #expect(waiting, "\(producer.status)")
        #expect(done.outcomes == nil)
        try await cluster.setBrokerUp(1)
        let outcomes = try #require(await done.wait(timeout: .seconds(90)))
        #expect(allDelivered(outcomes), firstFailure(outcomes))

        let read = try await readTopic(cluster, topic: "down", expected: 930)
        expectSameMessages(read.filter { !$0.value.contains("\"warm_") }, sent: messages)
        await producer.close(drainTimeout: .seconds(5))
    }

    @Test func leaderChangesDuringAStreamLoseAndReorderNothing() async throws {
        let cluster = try await KafkaMockPeer.start(brokers: 3)
        try await cluster.createTopic("moving", partitions: 4, replicationFactor: 3)
        let producer = try makeProducer(cluster.bootstrapServers, maxOutstanding: 200, properties: mockSafe)
        let messages = eventMessages(topic: "moving", count: 3_000, items: 40)
        let done = OutcomeBox()
        var moves = 0
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [producer = UnsafeTransfer(value: producer)] in
                try await producer.value.submit(messages) { done.store($0) }
            }
            // Move every leader three times while the stream runs, each time once 500 more were delivered.
            for (round, broker) in [Int32(2), 3, 1].enumerated() {
                let target = UInt64(500 * (round + 1))
                #expect(await pollUntil(timeout: .seconds(60)) { producer.status.delivered >= target })
                for partition in Int32(0)..<4 {
                    try await cluster.setLeader(topic: "moving", partition: partition, broker: broker)
                }
                moves += 1
            }
            try await group.waitForAll()
        }
        let _ = try #require(await done.wait(timeout: .seconds(90)))
        #expect(moves == 3)
        #expect(allDelivered(done.outcomes ?? []))
        let read = try await readTopic(cluster, topic: "moving", expected: messages.count)
        expectSameMessages(read, sent: messages)
        await producer.close(drainTimeout: .seconds(5))
    }

    @Test func injectedRetriableProduceErrorsAreRetriedWithoutDuplicates() async throws {
        let cluster = try await KafkaMockPeer.start(brokers: 3)
        try await cluster.createTopic("flaky", partitions: 2, replicationFactor: 3)
        let producer = try makeProducer(cluster.bootstrapServers, properties: mockSafe)
        #expect(
            allDelivered(try await producer.send(eventMessages(topic: "flaky", count: 10, items: 5, prefix: "warm")))
        )
        try await cluster.failNextProduceRequests(
            with: codes(.notLeaderForPartition, .requestTimedOut, .notEnoughReplicas, .transport, .notEnoughReplicas)
        )
        let messages = eventMessages(topic: "flaky", count: 1_000, items: 25)
        let outcomes = try await producer.send(messages)
        #expect(allDelivered(outcomes), firstFailure(outcomes))
        let read = try await readTopic(cluster, topic: "flaky", expected: 1_010)
        expectSameMessages(read.filter { !$0.value.contains("\"warm_") }, sent: messages)
        await producer.close(drainTimeout: .seconds(5))
    }

    @Test func permanentProduceErrorsAreTypedFailures() async throws {
        let cluster = try await KafkaMockPeer.start(brokers: 1)
        try await cluster.createTopic("refused", partitions: 1, replicationFactor: 1)
        let producer = try makeProducer(cluster.bootstrapServers)
        #expect(
            allDelivered(try await producer.send(eventMessages(topic: "refused", count: 1, items: 1, prefix: "warm")))
        )

        try await cluster.failNextProduceRequests(with: codes(.topicAuthorizationFailed))
        let denied = try await producer.send(eventMessages(topic: "refused", count: 1, items: 1, prefix: "denied"))
        let error = try #require(denied.first?.error)
        #expect(error.kind == .authentication && error.code == .topicAuthorizationFailed, "\(error)")

        let invalid = try await producer.send([KafkaMessage(topic: "no/such topic", key: "k", value: [1])])
        #expect(invalid.first?.error?.kind == .rejected)
        #expect(producer.status.failed == 2)
        await producer.close(drainTimeout: .seconds(5))
    }

    /// Found by AddressSanitizer (docs/RELIABILITY.md "Sanitizers"): `rd_kafka_message_errstr` returns a failed
    /// message's payload as its error text when the message has one, which for a producer is the event itself: not
    /// NUL-terminated (a heap over-read), and the event's data in an error message and the log.
    @Test func aFailedDeliveryNeverQuotesTheMessage() async throws {
        let cluster = try await KafkaMockPeer.start(brokers: 1)
        try await cluster.createTopic("private", partitions: 1, replicationFactor: 1)
        let producer = try makeProducer(cluster.bootstrapServers)
        #expect(
            allDelivered(try await producer.send(eventMessages(topic: "private", count: 1, items: 1, prefix: "warm")))
        )
        try await cluster.failNextProduceRequests(with: codes(.topicAuthorizationFailed))
        let denied = try await producer.send(eventMessages(topic: "private", count: 1, items: 1, prefix: "secret"))
        let error = try #require(denied.first?.error)
        #expect(!error.description.contains("secret_000000") && !error.description.contains("lorem"), "\(error)")
        await producer.close(drainTimeout: .seconds(5))
    }

    @Test func expediteSendsWhatLingersAtOnce() async throws {
        let cluster = try await KafkaMockPeer.start(brokers: 1)
        try await cluster.createTopic("lingering", partitions: 2, replicationFactor: 1)
        // librdkafka's longest linger, 15 minutes: without expedite, none of these would be sent before the wait below
        // gives up.
        let producer = try makeProducer(cluster.bootstrapServers, properties: ["linger.ms": "900000"])
        let done = OutcomeBox()
        try await producer.submit(eventMessages(topic: "lingering", count: 100, items: 10)) { done.store($0) }
        // An expedited flush lasts at most 100 ms, and its caller asks again while it waits on. On a loaded machine the
        // new topic's metadata can come later than that; what reaches a partition afterwards lingers for 15 minutes.
        let deadline = ContinuousClock.now + .seconds(20 * TestEnvironment.patience)
        var delivered: [KafkaDeliveryOutcome]?
        while delivered == nil, ContinuousClock.now < deadline {
            producer.expedite()
            delivered = await done.wait(timeout: .milliseconds(100))
        }
        let outcomes = try #require(delivered)
        #expect(allDelivered(outcomes), firstFailure(outcomes))
        await producer.close(drainTimeout: .seconds(5))
    }

    /// The sink's runner hands batches over with `submitBlocking` on its own thread: past the bound it serves delivery
    /// reports until they free room, then hands over the rest, in order; handed back, the last reports are the poll
    /// thread's.
    @Test func submitBlockingWaitsForRoomAndHandsOverEverythingInOrder() async throws {
        let (cluster, producer) = try await boundedProducer(topic: "blocking")
        let messages = eventMessages(topic: "blocking", count: 200, items: 20)
        let done = OutcomeBox()
        try await BlockingExecutor.shared.perform { [producer = UnsafeTransfer(value: producer)] in
            producer.value.submitBlocking(messages) { done.store($0) }
            producer.value.handReportsBack()
        }
        // Returned: every message was handed over, at most ten at a time.
        let outcomes = try #require(await done.wait(timeout: .seconds(30)))
        #expect(allDelivered(outcomes), firstFailure(outcomes))
        #expect(producer.status.delivered == 200 && producer.status.outstanding == 0)
        let read = try await readTopic(cluster, topic: "blocking", expected: messages.count)
        expectSameMessages(read, sent: messages)
        await producer.close(drainTimeout: .seconds(5))
    }

    @Test func submitWaitsAtTheBoundAndCloseReportsWhatWasNeverDelivered() async throws {
        let cluster = try await KafkaMockPeer.start(brokers: 1)
        try await cluster.createTopic("bounded", partitions: 1, replicationFactor: 1)
        let producer = try makeProducer(cluster.bootstrapServers, maxOutstanding: 10)
        #expect(
            allDelivered(try await producer.send(eventMessages(topic: "bounded", count: 1, items: 1, prefix: "warm")))
        )
        try await cluster.setBrokerDown(1)

        let done = OutcomeBox()
        let returned = Flag()
        let submitted = eventMessages(topic: "bounded", count: 100, items: 10)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [producer = UnsafeTransfer(value: producer)] in
                do {
                    try await producer.value.submit(submitted) { done.store($0) }
                    returned.set()
                } catch is CancellationError {}
            }
            // Ten handed over, the rest held back by the bound; cancelling the waiting submit reports them.
            #expect(await pollUntil(timeout: .seconds(30)) { producer.status.outstanding == 10 })
            try await Task.sleep(for: .milliseconds(200))
            let returnedEarly = returned.isSet
            #expect(!returnedEarly && producer.status.outstanding == 10)
            group.cancelAll()
            try await group.waitForAll()
        }
        let returnedAtAll = returned.isSet
        #expect(!returnedAtAll)
        #expect(done.outcomes == nil, "the ten outstanding are still waiting for the broker")
        await producer.close(drainTimeout: .milliseconds(200))
        let outcomes = try #require(await done.wait(timeout: .seconds(10)))
        #expect(outcomes.count == 100 && outcomes.allSatisfy { $0.error?.isRetriable == true })
        #expect(
            outcomes.prefix(10).allSatisfy {
                [KafkaError.Code.purgedFromQueue, .purgedInFlight].contains($0.error?.code)
            }
        )
    }
}

/// Collects one batch's outcomes from the poll thread; tests wait on it.
final class OutcomeBox: Sendable {
    private let state = Mutex<[KafkaDeliveryOutcome]?>(nil)
    func store(_ outcomes: KafkaDeliveryOutcomes) { state.withLock { $0 = Array(outcomes) } }

    var outcomes: [KafkaDeliveryOutcome]? { state.withLock { $0 } }

    func wait(timeout: Duration) async -> [KafkaDeliveryOutcome]? {
        _ = await pollUntil(timeout: timeout) { outcomes != nil }
        return outcomes
    }
}

/// Hands a non-Sendable value to a child task the test joins before using the value again.
struct UnsafeTransfer<Value>: @unchecked Sendable {
    let value: Value
}

/// The first failure's description, for expectation messages.
func firstFailure(_ outcomes: [KafkaDeliveryOutcome]) -> Comment {
    Comment(rawValue: outcomes.compactMap(\.error).first.map { "\($0)" } ?? "")
}

/// Whether every outcome is a delivery.
func allDelivered(_ outcomes: [KafkaDeliveryOutcome]) -> Bool { outcomes.allSatisfy { $0.isDelivered } }

/// A flag a child task sets and the test reads.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}
