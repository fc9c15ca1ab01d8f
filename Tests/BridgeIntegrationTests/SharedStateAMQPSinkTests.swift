import BridgeTestSupport
import Foundation
import Testing

/// An AMQP sink on shared state (`state.backend: jetstream`), against Debian's rabbitmq-server read back with pika:
/// the active bridge killed mid-stream, the standby resumes from the shared cursor and publishes again what the dead
/// bridge had confirmed after it (at least once: every change arrives, a repeat carries the same `message_id`); an
/// unroutable message's dead letter is listed from either bridge and replayed by the next active one.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SharedStateAMQPSinkTests: SharedStateRig {
    /// The node both tests share (RabbitMQ starts slowly); each test has its own exchange and queue.
    static let broker: Result<RabbitMQServer, any Error> = Result {
        let broker = try RabbitMQServer(in: try TestEnvironment.makeTemporaryDirectory(prefix: "shared-amqp"))
        try broker.start()
        return broker
    }

    @Test func aKilledActiveBridgesStandbyPublishesEveryChangeAtLeastOnce() throws {
        let server = try startedSingleServer("shared-amqp-kill")
        let broker = try Self.broker.get()
        try AMQPAdmin.run(["setup", broker.url(), "shared-failover", "shared-failover-queue", "articles.#"])
        let emulator = try Emulator()
        defer { emulator.stop() }
        let yaml = try config(emulator, [server], adding: amqpSink(broker.url(), exchange: "shared-failover"))
        let (expected, survivor, deliveredByFirst) = try failOverMidStream(emulator, config: yaml)

        let deadline = Date().addingTimeInterval(TestEnvironment.patient(60))
        var messages = try AMQPAdmin.read(broker, "shared-failover-queue")
        while !Set(messages.map(\.message_id)).isSuperset(of: expected) && Date() < deadline {
            usleep(500_000)
            messages += try AMQPAdmin.read(broker, "shared-failover-queue")
        }
        let repeats = expectEveryChangeAtLeastOnce(messages.map { ($0.message_id, $0.body) }, expected: expected)
        #expect(messages.allSatisfy { $0.delivery_mode == 2 && $0.headers["collection"] == "articles" })
        print("shared state amqp failover: \(deliveredByFirst) written before the kill, \(repeats) published again")
        survivor.send(SIGTERM)
        #expect(survivor.waitForExit() == 0, "\(survivor.stderr.suffix(2000))")
    }

    /// An AMQP sink's dead letter lives in the bucket: bridge A's message is unroutable (no queue bound for
    /// `articles.*`), and `dlq list` run in either bridge's directory lists it; B is frozen and A dies; a queue is bound,
    /// `dlq replay` run in B's directory marks the letter, and B, active now, publishes it with its event id.
    @Test func anAMQPSinksDeadLetterIsSeenFromEitherBridgeAndReplayedByTheNextActiveOne() throws {
        let server = try startedSingleServer("shared-amqp-dlq")
        let broker = try Self.broker.get()
        try AMQPAdmin.run(["setup", broker.url(), "shared-dlq", "shared-dlq-queue", "nothing.#"])
        let emulator = try Emulator()
        defer { emulator.stop() }
        let yaml = try config(emulator, [server], adding: amqpSink(broker.url(), exchange: "shared-dlq"))
        let (active, standby) = try startPair(config: yaml)
        let key = try #require(try emulator.createArticles(1, title: "unroutable").first)
        #expect(active.waitForLog("stored as a dead letter", timeout: 60), "\(active.stderr.suffix(3000))")

        let letterID = try oneDeadLetterListedByBoth("queue", key: key, reason: "unroutable", active, standby)

        // B frozen until the queue is bound: should A have died before the shared cursor passed the letter, B's own
        // re-send is routable too (and not a second letter).
        freezeStandbyAndKillActive(active, standby)
        try AMQPAdmin.run(["setup", broker.url(), "shared-dlq", "shared-dlq-queue", "articles.#"])
        try replayOneDeadLetter("queue", in: standby)
        standby.send(SIGCONT)
        #expect(standby.waitForLog("became active", timeout: 30), "\(standby.stderr.suffix(3000))")
        // At least once: had A died before the shared cursor passed the letter, B also sends it again on its own.
        let messages = try waitForMessages(broker, "shared-dlq-queue", count: 1)
        #expect(!messages.isEmpty && messages.allSatisfy { $0.message_id == letterID }, "\(messages)")
        #expect(messages.first?.headers["key"] == key)
        #expect(standby.waitForLog("replayed dead letters delivered", timeout: 30), "\(standby.stderr.suffix(3000))")
        #expect(try deadLetters("queue", in: standby).isEmpty)
        standby.send(SIGTERM)
        #expect(standby.waitForExit() == 0, "\(standby.stderr.suffix(2000))")
    }
}
