import BridgeTestSupport
import Foundation
import Testing

/// A JetStream stream that is full (`max_msgs` reached with discard new: nats-server answers "maximum messages
/// exceeded") is a sink that is full, not one that refuses: the events wait and are retried, none becomes a dead
/// letter, `/readyz` names the sink; once the operator raises the limit every event is stored, each once.
@Suite(.serialized, .timeLimit(.minutes(10))) struct JetStreamFullStreamTests {
    @Test func aFullStreamHoldsEventsBackAndLosesNoneOnceItIsRaised() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "jetstream-full")
        let server = try NATSServer(name: "single", in: directory)
        try server.start()
        try EventsStream.create([server], replicas: 1, maxMessages: 2)
        let emulator = try Emulator()
        defer { emulator.stop() }
        let entry = "  - type: jetstream\n    name: stream\n    servers: [\"\(server.url)\"]\n    ack_timeout: 1s\n"
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: entry, operations: true, mode: "activity"))
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")

        try emulator.createArticles(12, title: "into a full stream")
        let problems = { bridge.stderr.split(separator: "\n").filter { !$0.contains(" stats ") }.suffix(30) }
        #expect(bridge.waitForLog("maximum messages exceeded", timeout: 60), "\(problems())")
        #expect(
            bridge.waitUntil(timeout: 90) { _ in
                guard let answer = try? HTTPFetch.get(base + "/readyz") else { return false }
                return answer.status == 503 && String(decoding: answer.body, as: UTF8.self).contains("stream")
            },
            "\(bridge.stderr.suffix(2000))")
        #expect(!bridge.stderr.contains("stored as a dead letter"), "\(bridge.stderr.suffix(2000))")
        #expect(EventsStream.read([server]).count == 2)

        try EventsStream.setMaxMessages([server], -1)
        let stored = EventsStream.waitFor([server], count: 12)
        #expect(stored.count == 12, "\(bridge.stderr.suffix(2000))")
        #expect(Set(stored.map(\.msg_id)).count == stored.count, "an event stored twice")
        let dlq = try BridgeProcess(
            arguments: ["dlq", "list", "--json", "--sink", "stream", "--config", "bridge.yaml"],
            directory: bridge.directory)
        #expect(dlq.waitForExit(timeout: 30) == 0 && dlq.lines.isEmpty, "\(dlq.lines) \(dlq.stderr)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit(timeout: 30) == 0, "\(bridge.stderr.suffix(2000))")
    }
}
