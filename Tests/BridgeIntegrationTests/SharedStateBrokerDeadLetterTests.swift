import BridgeTestSupport
import Foundation
import Testing

extension SharedStateCommandTests {
    /// A broker sink's dead letter with shared state lives in the bucket: bridge A's JetStream sink meets a stream
    /// that refuses large messages, `dlq list` run elsewhere lists the refused event from the bucket; A dies; the
    /// stream's limit is raised, `dlq replay` marks it, and bridge B, active now, publishes it with its event id.
    @Test func aBrokerSinksDeadLetterLivesInTheBucketAndTheNextActiveBridgeReplaysIt() throws {
        let server = try startedSingleServer("shared-broker-dlq")
        try EventsStream.create([server], replicas: 1, maxMessageSize: 2048)
        let emulator = try Emulator()
        defer { emulator.stop() }
        let yaml = config(emulator, [server]).replacingOccurrences(
            of: "  - type: ndjson\n    path: \"out.ndjson\"",
            with: "  - type: jetstream\n    servers: [\"\(server.url)\"]\n    ack_timeout: 1s")
        try #require(yaml.contains("type: jetstream"))
        let (active, standby) = try startPair(config: yaml)

        let large = try #require(try emulator.createArticles(1, title: String(repeating: "x", count: 4000)).first)
        try emulator.createArticles(2, title: "small")
        #expect(EventsStream.waitFor([server], count: 2).count == 2, "\(active.stderr.suffix(3000))")
        var listed: [String] = []
        #expect(
            active.waitUntil(timeout: 30) { _ in
                listed = listedIDs(yaml)
                return listed.count == 1
            },
            "listed \(listed); \(active.stderr.suffix(3000))")
        #expect(!active.stderr.contains("kept in webhooks.db"))
        let letterID = try #require(listed.first)

        active.send(SIGKILL)
        #expect(active.waitForExit() != nil)
        #expect(standby.waitForLog("became active", timeout: 30), "\(standby.stderr.suffix(3000))")
        try EventsStream.setMaxMessageSize([server], -1)
        let replay = try command(["dlq", "replay"], yaml: yaml)
        #expect(replay.status == 0 && replay.stderr.contains("replayed 1 dead letter"), "\(replay.stderr)")
        let stored = EventsStream.waitFor([server], count: 3, timeout: 60)
        #expect(stored.count == 3, "\(standby.stderr.suffix(3000))")
        #expect(stored.last?.msg_id == letterID && "\(stored.last?.event["key"] ?? "")" == large)
        #expect(standby.waitForLog("replayed dead letters delivered", timeout: 30), "\(standby.stderr.suffix(3000))")
        #expect(listedIDs(yaml).isEmpty)
        standby.send(SIGTERM)
        #expect(standby.waitForExit() == 0, "\(standby.stderr.suffix(2000))")
    }
}
