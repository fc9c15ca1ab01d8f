import BridgeTestSupport
import Foundation
import Testing

/// An MQTT sink on shared state (`state.backend: jetstream`), against Debian's mosquitto read back with paho-mqtt:
/// the active bridge killed mid-stream, the standby resumes from the shared cursor and publishes again what the dead
/// bridge published after it (QoS 1 is at least once: every change arrives, a repeat carries the same `id` user
/// property); a dead letter is listed from either bridge and replayed by the next active one.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SharedStateMQTTSinkTests: SharedStateRig {
    func mqttEntry(_ broker: MosquittoServer) -> String {
        "  - type: mqtt\n    name: devices\n    url: \(broker.url())"
    }

    func startedBroker(_ prefix: String, extraConfig: String = "") throws -> MosquittoServer {
        let broker = try MosquittoServer(in: try TestEnvironment.makeTemporaryDirectory(prefix: prefix))
        broker.extraConfig = extraConfig
        try broker.start()
        return broker
    }

    @Test func aKilledActiveBridgesStandbyPublishesEveryChangeAtLeastOnce() throws {
        let server = try startedSingleServer("shared-mqtt-kill")
        let broker = try startedBroker("shared-mqtt")
        let reader = try broker.followReader(topic: "directus/#")
        let emulator = try Emulator()
        defer { emulator.stop() }
        let yaml = try config(emulator, [server], adding: mqttEntry(broker))
        let (expected, survivor, deliveredByFirst) = try failOverMidStream(emulator, config: yaml)

        let deadline = Date().addingTimeInterval(TestEnvironment.patient(60))
        var messages = receivedMQTTMessages(reader)
        while !Set(messages.compactMap { $0.properties["id"] }).isSuperset(of: expected) && Date() < deadline {
            usleep(500_000)
            messages = receivedMQTTMessages(reader)
        }
        let repeats = expectEveryChangeAtLeastOnce(
            messages.map { ($0.properties["id"], $0.payload) },
            expected: expected
        )
        #expect(messages.allSatisfy { $0.qos == 1 && $0.topic.hasPrefix("directus/articles/") })
        print("shared state mqtt failover: \(deliveredByFirst) written before the kill, \(repeats) published again")
        survivor.send(SIGTERM)
        #expect(survivor.waitForExit() == 0, "\(survivor.stderr.suffix(2000))")
    }

    /// An MQTT sink's dead letter lives in the bucket: bridge A's publish exceeds the broker's maximum packet size,
    /// and `dlq list` run in either bridge's directory lists it. B is frozen and A dies (libmosquitto keeps the
    /// first CONNACK's limit, so B must connect only after the limit is raised); the broker comes back without the
    /// limit, `dlq replay` run in B's directory marks the letter, and B, active now, publishes it with its event id.
    @Test func anMQTTSinksDeadLetterIsSeenFromEitherBridgeAndReplayedByTheNextActiveOne() throws {
        let server = try startedSingleServer("shared-mqtt-dlq")
        let broker = try startedBroker("shared-mqtt-dlq", extraConfig: "max_packet_size 4000")
        let reader = try broker.followReader(topic: "directus/#")
        let emulator = try Emulator()
        defer { emulator.stop() }
        let (active, standby) = try startPair(config: try config(emulator, [server], adding: mqttEntry(broker)))
        let large = try #require(try emulator.createArticles(1, title: String(repeating: "x", count: 6000)).first)
        #expect(active.waitForLog("stored as a dead letter", timeout: 60), "\(active.stderr.suffix(3000))")

        let letterID = try oneDeadLetterListedByBoth("devices", key: large, active, standby)

        freezeStandbyAndKillActive(active, standby)
        broker.stop()
        broker.extraConfig = ""
        try broker.start()
        try replayOneDeadLetter("devices", in: standby)
        standby.send(SIGCONT)
        #expect(standby.waitForLog("became active", timeout: 30), "\(standby.stderr.suffix(3000))")
        let deadline = Date().addingTimeInterval(TestEnvironment.patient(60))
        while !receivedMQTTMessages(reader).contains(where: { $0.properties["id"] == letterID }) && Date() < deadline {
            usleep(300_000)
        }
        // At least once: had A died before the shared cursor passed the letter, B also sends it again on its own.
        let replayed = receivedMQTTMessages(reader).filter { $0.properties["id"] == letterID }
        #expect(
            !replayed.isEmpty && replayed.allSatisfy { $0.properties["key"] == large },
            "\(standby.stderr.suffix(3000))"
        )
        #expect(standby.waitForLog("replayed dead letters delivered", timeout: 30), "\(standby.stderr.suffix(3000))")
        #expect(try deadLetters("devices", in: standby).isEmpty)
        standby.send(SIGTERM)
        #expect(standby.waitForExit() == 0, "\(standby.stderr.suffix(2000))")
    }
}
