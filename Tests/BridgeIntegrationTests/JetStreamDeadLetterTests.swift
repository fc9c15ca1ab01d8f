import BridgeTestSupport
import Foundation
import Testing

/// The real binary with a `type: jetstream` sink against Debian's nats-server, whose stream refuses large messages
/// (`max_msg_size`): a refused event is a dead letter (`dlq list`), later events are delivered, and once the stream's
/// limit is raised `dlq replay` hands it back to the running bridge, which stores it under its event id.
@Suite(.serialized, .timeLimit(.minutes(10))) struct JetStreamDeadLetterTests {
    @Test func aTooLargeEventIsADeadLetterAndReplayedOnceTheLimitIsRaised() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "jetstream-dlq")
        let server = try NATSServer(name: "limited", in: directory)
        try server.start()
        try EventsStream.create([server], replicas: 1, maxMessageSize: 2048)
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: webhookConfig(
                url: emulator.url, sinks: JetStreamSinkTests().sinks([server]), operations: true, mode: "activity"))
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")

        // One event too large for the stream, then three that fit.
        let large = try #require(try emulator.createArticles(1, title: String(repeating: "x", count: 4000)).first)
        try emulator.createArticles(3, title: "small")
        let stored = EventsStream.waitFor([server], count: 3)
        #expect(stored.count == 3, "\(bridge.stderr.suffix(3000))")
        #expect(stored.allSatisfy { "\($0.event["key"] ?? "")" != large })
        #expect(bridge.waitForLog("stored as a dead letter", timeout: 30), "\(bridge.stderr.suffix(2000))")
        let line = bridge.stderr.split(separator: "\n").first { $0.contains("stored as a dead letter") } ?? ""
        #expect(line.contains("ERROR") && line.contains("dlq replay"), "\(line)")

        // `dlq list` shows it, with the broker's reason; the metric counts it.
        let (listStatus, listed, listErrors) = try dlq(["list", "--json"], in: bridge.directory)
        #expect(listStatus == 0, "\(listErrors)")
        #expect(listed.count == 1, "\(listed) \(listErrors)")
        let letter = try #require(
            listed.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        let letterID = try #require(letter["id"] as? String)
        #expect(letterID.hasPrefix("act_") && letter["key"] as? String == large, "\(letter)")
        #expect((letter["reason"] as? String)?.contains("maximum") == true, "\(letter)")
        #expect((letter["sink"] as? String)?.hasPrefix("1-jetstream-") == true, "\(letter)")
        #expect(letter["event"] as? String == "create", "\(letter)")
        let metrics = try HTTPFetch.get(base + "/metrics").text
        #expect(
            try ParsedMetrics(parsing: metrics).value("directus_bridge_broker_dead_letters_total") == 1, "\(metrics)")

        // The operator raises the limit and replays: the running bridge sends it, with its event id.
        try EventsStream.setMaxMessageSize([server], -1)
        let (replayStatus, replayed, replayErrors) = try dlq(["replay"], in: bridge.directory)
        #expect(replayStatus == 0 && replayed.count == 1, "\(replayErrors)")
        let all = EventsStream.waitFor([server], count: 4, timeout: 60)
        #expect(all.count == 4, "\(bridge.stderr.suffix(3000))")
        let delivered = try #require(all.last)
        #expect(delivered.msg_id == letterID && "\(delivered.event["key"] ?? "")" == large)
        #expect(delivered.event["id"] as? String == letterID)
        #expect(bridge.waitForLog("replayed dead letters delivered", timeout: 30), "\(bridge.stderr.suffix(2000))")
        let (_, afterwards, _) = try dlq(["list"], in: bridge.directory)
        #expect(afterwards.isEmpty, "\(afterwards)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
        // Delivered once: nothing is left to send again after a restart.
        let restarted = try BridgeProcess.run(
            config: webhookConfig(
                url: emulator.url, sinks: JetStreamSinkTests().sinks([server]), operations: false, mode: "activity"),
            in: bridge.directory)
        #expect(restarted.waitUntilConnected(), "\(restarted.stderr)")
        // Instead of sleeping through "nothing more": two changes, the second made once the first is stored. The sink
        // looks for replayed letters after every batch it delivered (the first time at once), so by the time the
        // second change is stored it has looked at least once, after the first.
        for sentinel in 1...2 {
            try emulator.createArticles(1, title: "sentinel \(sentinel)")
            let stored = EventsStream.waitFor([server], count: 4 + sentinel)
            #expect(stored.count == 4 + sentinel, "\(restarted.stderr.suffix(2000))")
        }
        restarted.send(SIGTERM)
        #expect(restarted.waitForExit() == 0, "\(restarted.stderr.suffix(2000))")
        #expect(!restarted.stderr.contains("replayed dead letters handed"), "\(restarted.stderr.suffix(2000))")
        #expect(EventsStream.read([server]).count == 6)
    }

    /// `dlq replay` of a letter whose sink then left bridge.yaml (here: moved from the second place to the first, so
    /// its id changed): the row waits in the outbox for a sink of that id. A bridge with only broker sinks said
    /// nothing about it at start, where a webhook sink names such rows.
    @Test func aReplayedLetterOfASinkNoLongerConfiguredIsNamedAtStart() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "jetstream-dlq-moved")
        let server = try NATSServer(name: "limited", in: directory)
        try server.start()
        try EventsStream.create([server], replicas: 1, maxMessageSize: 2048)
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: JetStreamSinkTests().sinks([server]), mode: "activity"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.createArticles(1, title: String(repeating: "x", count: 4000))
        #expect(bridge.waitForLog("stored as a dead letter", timeout: 30), "\(bridge.stderr.suffix(2000))")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
        let (replayStatus, replayed, replayErrors) = try dlq(["replay"], in: bridge.directory)
        #expect(replayStatus == 0 && replayed.count == 1, "\(replayErrors)")

        let jetStreamOnly = "  - type: jetstream\n    servers: [\"\(server.url)\"]\n    ack_timeout: 1s\n"
        let moved = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: jetStreamOnly, mode: "activity"), in: bridge.directory)
        #expect(moved.waitUntilConnected(), "\(moved.stderr)")
        #expect(
            moved.waitForLog("the outbox holds events of a sink that is no longer configured", timeout: 30),
            "\(moved.stderr.suffix(2000))")
        let line = moved.stderr.split(separator: "\n").first { $0.contains("the outbox holds events") } ?? ""
        #expect(line.contains("1-jetstream-") && line.contains("count=1"), "\(line)")
        moved.send(SIGTERM)
        #expect(moved.waitForExit() == 0, "\(moved.stderr.suffix(2000))")
    }
}
