import BridgeMQTT
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// The MQTT client against Debian's mosquitto started by the test, read back with paho-mqtt.
@Suite(.timeLimit(.minutes(5)))
struct MQTTClientTests {
    @Test func qos1PublishesAreAcknowledgedAndArriveWithTheirUserProperties() async throws {
        let broker = try await startedMosquitto()
        let reader = try await broker.followReader(topic: "directus/#")
        let client = try await MQTTClient.connect(settings: try MQTTSettings(url: broker.url(), clientID: "bridge-a"))
        #expect(client.status.protocolVersion == 5 && client.status.connected)
        let messages = mqttMessages(count: 500, items: 20)
        let outcomes = await client.publish(messages, timeout: .seconds(30))
        #expect(outcomes.allSatisfy { $0.error == nil }, "\(outcomes.compactMap(\.error).first.map { "\($0)" } ?? "")")
        let received = try await waitForIDs(reader, count: 500)
        let sample = try #require(received["evt_000007"])
        #expect(sample.topic == "directus/articles/update" && sample.qos == 1 && !sample.retain)
        #expect(sample.properties == ["id": "evt_000007", "type": "items.update", "key": "item-7"])
        #expect(sample.payload == String(decoding: messages[7].payload, as: UTF8.self))
        await client.close()
    }

    @Test func qos2PublishesAreAcknowledgedOnPubcomp() async throws {
        let broker = try await startedMosquitto()
        let reader = try await broker.followReader(topic: "directus/#")
        let client = try await MQTTClient.connect(
            settings: try MQTTSettings(url: broker.url(), clientID: "bridge-qos2", qos: 2)
        )
        let outcomes = await client.publish(mqttMessages(count: 200, items: 5), timeout: .seconds(30))
        #expect(outcomes.allSatisfy { $0.error == nil })
        _ = try await waitForIDs(reader, count: 200)
        await client.close()
    }

    /// mosquitto sends each PUBACK in a write of its own with Nagle's algorithm on: after the first of a burst it
    /// holds the rest until the client's TCP acknowledges it, and a client with nothing more to send (a batch's
    /// last burst) delays that acknowledgement by Linux's 40 ms minimum. Every batch then waited at least 40 ms for
    /// its last PUBACKs (the sink's pages of 500: about 8k events/s whatever the load, BENCHMARKS.md). While the
    /// batches stalled, at most 4 of a round of 20 took less than 40 ms; unstalled, nearly all do on a quiet
    /// machine. A loaded one slows every batch, so rounds are tried until one has half its batches quick or the
    /// (stretched) deadline passes.
    @Test func aBatchsLastAcknowledgementsAreNotHeldByDelayedACKs() async throws {
        let broker = try await startedMosquitto()
        let client = try await MQTTClient.connect(settings: try MQTTSettings(url: broker.url(), clientID: "bridge-ack"))
        // The benchmark's shape: ~450-byte events with their user properties, batches of 100.
        let padding = Array(String(repeating: "lorem ipsum ", count: 32).utf8)
        let messages = mqttMessages(count: 100, items: 100).map {
            MQTTMessage(topic: $0.topic, payload: $0.payload + padding, userProperties: $0.userProperties)
        }
        #expect(await client.publish(messages, timeout: .seconds(30)).allSatisfy { $0.error == nil })  // warm-up
        let deadline = ContinuousClock.now + .seconds(TestEnvironment.patient(60))
        var best: (quick: Int, durations: [Duration]) = (0, [])
        while best.quick < 10 && ContinuousClock.now < deadline {
            var durations: [Duration] = []
            for _ in 0..<20 {
                let started = ContinuousClock.now
                #expect(await client.publish(messages, timeout: .seconds(30)).allSatisfy { $0.error == nil })
                durations.append(ContinuousClock.now - started)
            }
            let quick = durations.filter { $0 < .milliseconds(40) }.count
            if quick >= best.quick { best = (quick, durations) }
        }
        #expect(best.quick >= 10, "batches under 40 ms, best round: \(best.quick) of 20; \(best.durations)")
        await client.close()
    }

    @Test func retainedStateIsKeptForNewSubscribersAndAnEmptyMessageClearsIt() async throws {
        let broker = try await startedMosquitto()
        let client = try await MQTTClient.connect(settings: try MQTTSettings(url: broker.url(), clientID: "bridge-r"))
        let state = (1...3).map {
            MQTTMessage(topic: "state/articles/\($0)", payload: Array("{\"v\":\($0)}".utf8), retain: true)
        }
        #expect(await client.publish(state, timeout: .seconds(30)).allSatisfy { $0.error == nil })
        let cleared = [MQTTMessage(topic: "state/articles/2", payload: [], retain: true)]
        #expect(await client.publish(cleared, timeout: .seconds(30)).allSatisfy { $0.error == nil })
        let snapshot = try await mqttSnapshot(broker, topic: "state/#")
        #expect(Set(snapshot.filter(\.retain).map(\.topic)) == ["state/articles/1", "state/articles/3"])
        await client.close()
    }

    @Test func aBrokerRestartMidStreamLosesNothing() async throws {
        let broker = try await startedMosquitto()
        let reader = try await broker.followReader(topic: "directus/#")
        let client = try await MQTTClient.connect(
            settings: try MQTTSettings(url: broker.url(), clientID: "bridge-restart")
        )
        let messages = mqttMessages(count: 3_000, items: 40)
        var next = 0
        var failures = 0
        var restarted = false
        while next < messages.count {
            if next >= 1_000 && !restarted {
                restarted = true
                try await broker.stop()
                try await broker.start()
            }
            let batch = Array(messages[next..<min(messages.count, next + 250)])
            let outcomes = await client.publish(batch, timeout: .seconds(5))
            if outcomes.allSatisfy({ $0.error == nil }) {
                next += batch.count
            } else {
                #expect(outcomes.compactMap(\.error).allSatisfy { $0.isRetriable })
                failures += 1
            }
        }
        // Every message arrives at least once; a resend after the reconnect may arrive twice, as QoS 1 allows.
        _ = try await waitForIDs(reader, count: 3_000)
        #expect(client.status.connected)
        _ = failures
        await client.close()
    }

    /// The broker comes back refusing the client's credentials (MQTT 5: a CONNACK with reason 0x86 or 0x87, which
    /// libmosquitto's own network thread took as fatal and ended on), then takes them again: the same client
    /// reconnects with backoff by itself and has what was published meanwhile acknowledged.
    @Test func aClientRefusedAfterTheStartReconnectsByItselfOnceTheBrokerTakesItAgain() async throws {
        let broker = try await startedMosquitto(users: ["bridge": "right-pw-123"])
        let client = try await MQTTClient.connect(
            settings: try MQTTSettings(url: broker.url(credentials: "bridge:right-pw-123"), clientID: "bridge-again")
        )
        try await broker.stop()
        broker.users = ["bridge": "other-pw-456"]
        try await broker.start()
        let refusedBy = ContinuousClock.now + .seconds(TestEnvironment.patient(60))
        while client.status.disconnects < 2 && ContinuousClock.now < refusedBy {
            try await Task.sleep(for: .milliseconds(50))  // polling a status nothing announces
        }
        #expect(client.status.disconnects >= 2 && !client.status.connected, "lost, then refused")
        try await broker.stop()
        broker.users = ["bridge": "right-pw-123"]
        try await broker.start()
        let outcomes = await client.publish(
            mqttMessages(count: 20, items: 2),
            timeout: .seconds(TestEnvironment.patient(120))
        )
        #expect(outcomes.allSatisfy { $0.error == nil }, "\(outcomes.compactMap(\.error).first.map { "\($0)" } ?? "")")
        #expect(client.status.connected)
        await client.close()
    }

    @Test func credentialsAreCheckedAndRefusedOnesAreAnAuthenticationError() async throws {
        let broker = try await startedMosquitto(users: ["bridge": "p@ss/word"])
        let client = try await MQTTClient.connect(
            settings: try MQTTSettings(url: broker.url(credentials: "bridge:p%40ss%2Fword"), clientID: "bridge-auth")
        )
        #expect(
            await client.publish(mqttMessages(count: 5, items: 1), timeout: .seconds(30)).allSatisfy { $0.error == nil }
        )
        await client.close()
        for credentials in ["bridge:wrong", "nobody:p%40ss%2Fword", nil] {
            do {
                let refused = try await MQTTClient.connect(
                    settings: try MQTTSettings(url: broker.url(credentials: credentials), clientID: "bridge-refused")
                )
                await refused.close()
                Issue.record("\(credentials ?? "anonymous") accepted")
            } catch {
                #expect(error.kind == .authentication, "\(error)")
            }
        }
    }

    @Test func tlsWithTheTestCAAndWithoutIt() async throws {
        let broker = try await startedMosquitto(tls: true)
        let ca = try #require(broker.certificates?.ca)
        let client = try await MQTTClient.connect(
            settings: try MQTTSettings(url: broker.url(), clientID: "bridge-tls", caFile: ca)
        )
        #expect(
            await client.publish(mqttMessages(count: 20, items: 2), timeout: .seconds(30)).allSatisfy {
                $0.error == nil
            }
        )
        await client.close()
        do {
            let untrusting = try await MQTTClient.connect(
                settings: try MQTTSettings(url: broker.url(), clientID: "bridge-untrusting")
            )
            await untrusting.close()
            Issue.record("a broker signed by an unknown CA was trusted")
        } catch {
            #expect(error.kind == .authentication, "\(error)")
        }
    }

    @Test func aBrokerThatIsDownOrNeverAnswersIsRetriable() async throws {
        let port = try freeLoopbackPort()
        do {
            _ = try await MQTTClient.connect(settings: try MQTTSettings(url: "mqtt://127.0.0.1:\(port)", clientID: "x"))
            Issue.record("connected to nothing")
        } catch {
            #expect(error.kind == .retriable, "\(error)")
        }
        let silent = try await connectingToASilentBroker(connectTimeout: .milliseconds(800))
        #expect(silent.error?.kind == .retriable && silent.error?.message.contains("CONNACK") == true, "\(silent)")
        // A bound, not a hang. Generous: in a whole unit run on the loaded box the cooperative pool runs tasks tens
        // of seconds late (this test once took 32.6 s there, and 38.5 s in a green run).
        #expect(silent.took < .seconds(TestEnvironment.patient(60)), "a bound, not a hang")
    }

    /// A broker that accepts and never answers, with a keep-alive shorter than the connect timeout: libmosquitto's
    /// keep-alive closes the connection first (after 5 s: no CONNACK is a silence it gives up on). The connect
    /// fails then, at once, retriable and naming the CONNACK it never got; it said "lost the connection to the
    /// broker, reconnecting" before, which is also what a loaded run with the default 30 s keep-alive showed once:
    /// a connect that waited that long for a thread to run on failed 32.6 s in without naming the CONNACK.
    @Test func aSilentBrokerClosedByTheKeepAliveFailsNamingTheCONNACK() async throws {
        let silent = try await connectingToASilentBroker(
            connectTimeout: .seconds(TestEnvironment.patient(120)),
            keepAlive: .seconds(5)
        )
        let namesTheCONNACK = silent.error?.message.contains("before its CONNACK") == true
        #expect(silent.error?.kind == .retriable && namesTheCONNACK, "\(silent)")
        // Ended by the keep-alive, not by the connect timeout.
        #expect(silent.took < .seconds(TestEnvironment.patient(60)), "the keep-alive's bound")
    }

    /// Connects to a broker that accepts and never answers: the connect's error (nil: it connected) and how long
    /// the connect took.
    func connectingToASilentBroker(connectTimeout: Duration, keepAlive: Duration = .seconds(30)) async throws
        -> (error: MQTTError?, took: Duration)
    {
        let silent = try await PythonServer.start(script: "broker_peers/hostile_server.py", arguments: ["silent"])
        let settings = try MQTTSettings(
            url: "mqtt://127.0.0.1:\(silent.port)",
            clientID: "x",
            connectTimeout: connectTimeout,
            keepAlive: keepAlive
        )
        let started = ContinuousClock.now
        do {
            let client = try await MQTTClient.connect(settings: settings)
            await client.close()
            return (nil, ContinuousClock.now - started)
        } catch {
            return (error, ContinuousClock.now - started)
        }
    }

    @Test func aBrokerThatRefusesMQTT5GetsMQTT311() async throws {
        let broker = try await PythonServer.start(script: "broker_peers/hostile_server.py", arguments: ["mqtt311-only"])
        let client = try await MQTTClient.connect(
            settings: try MQTTSettings(url: "mqtt://127.0.0.1:\(broker.port)", clientID: "bridge-311")
        )
        #expect(client.status.protocolVersion == 4)
        // User properties do not exist in 3.1.1: the messages go without them.
        #expect(
            await client.publish(mqttMessages(count: 50, items: 3), timeout: .seconds(30)).allSatisfy {
                $0.error == nil
            }
        )
        await client.close()
    }

    @Test func settingsAreChecked() {
        #expect(throws: MQTTError.self) { try MQTTSettings(url: "mqtt://h/path", clientID: "x") }
        #expect(throws: MQTTError.self) { try MQTTSettings(url: "mqtt://h", clientID: "x", qos: 0) }
        #expect(throws: MQTTError.self) { try MQTTSettings(url: "mqtt://h", clientID: "") }
        #expect(throws: MQTTError.self) { try MQTTSettings(url: "redis://h", clientID: "x") }
        #expect(throws: MQTTError.self) { try MQTTTopic.validate("a/+/b") }
        #expect(throws: MQTTError.self) { try MQTTTopic.validate("") }
    }
}
