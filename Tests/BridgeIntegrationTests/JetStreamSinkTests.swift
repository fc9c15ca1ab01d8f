import BridgeTestSupport
import Foundation
import Testing

/// The real binary with a `type: jetstream` sink against Debian's nats-server (single node and a three-node
/// cluster on loopback), read back with nats-py (Tests/tools/broker_peers/nats_admin.py): every change stored once
/// under its event id, the same bytes as its NDJSON line, in order per item — across a killed node, a SIGKILLed
/// bridge, a server down for 10 s; and a refused credential shows in the log and in `/readyz`.
@Suite(.serialized, .timeLimit(.minutes(10))) struct JetStreamSinkTests {
    /// A jetstream sink entry for `webhookConfig` (an NDJSON sink on stdout comes first, to compare bodies).
    func sinks(_ servers: [NATSServer], _ extra: String = "") -> String {
        let urls = servers.map { "\"\($0.url)\"" }.joined(separator: ", ")
        return "  - type: ndjson\n    path: \"-\"\n  - type: jetstream\n    servers: [\(urls)]\n    ack_timeout: 1s\n"
            + extra.split(separator: "\n").map { "    \($0)\n" }.joined()
    }

    /// Each event once (ids unique), under its subject, and each item's events in activity order (live events,
    /// which have no activity id, in the order of `liveOrder`, their ids as the bridge emitted them).
    func expectOncePerEventInItemOrder(
        _ stored: [EventsStream.Stored], liveOrder: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let position = Dictionary(liveOrder.enumerated().map { ($1, $0) }) { first, _ in first }
        #expect(
            Set(stored.map(\.msg_id)).count == stored.count, "an event stored twice", sourceLocation: sourceLocation)
        var lastSeq: [String: Int] = [:]
        for message in stored {
            let event = message.event
            let key = "\(event["key"] ?? "")"
            #expect(message.msg_id == event["id"] as? String, sourceLocation: sourceLocation)
            let subject = "directus.articles.\(event["event"] as? String ?? "")"
            #expect(message.subject == subject, sourceLocation: sourceLocation)
            let seq = event["seq"] as? Int ?? position[message.msg_id] ?? -1
            #expect(seq > lastSeq[key, default: -1], "item \(key) out of order", sourceLocation: sourceLocation)
            lastSeq[key] = seq
        }
    }

    /// Creates `count` articles (one request) and returns their keys.
    @discardableResult
    @Test func singleNodeStoresEveryChangeOnceAsItsEventLine() throws {
        let server = try EventsStream.singleServer(prefix: "jetstream-single")
        let emulator = try Emulator()
        defer { emulator.stop() }
        // Live mode: every sink gets the very bytes of each event (in activity mode each sink reads on its own).
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: sinks([server]), mode: "live"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")

        let keys = try emulator.createArticles(20, title: "single")
        try emulator.updateArticles(Array(keys.prefix(5)), round: 1)
        try emulator.rest("DELETE", "/items/articles/\(keys[19])")
        let stored = EventsStream.waitFor([server], count: 26)
        #expect(stored.count == 26, "\(bridge.stderr.suffix(3000))")
        #expect(bridge.waitUntil { $0.lines.count >= 26 })
        expectOncePerEventInItemOrder(stored, liveOrder: bridge.events.compactMap { $0["id"] as? String })
        // The message value is the event exactly as its NDJSON line, without the newline.
        #expect(bridge.waitUntil { $0.lines.count >= 26 })
        #expect(Set(stored.map(\.data)) == Set(bridge.lines))
        #expect(Set(stored.map(\.subject)) == ["directus.articles.create", "directus.articles.update",
                                               "directus.articles.delete"])
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    @Test func aClusterNodeKilledDuringAStreamOfChangesLosesNothing() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "jetstream-cluster")
        let servers = try NATSServer.cluster(in: directory)
        try EventsStream.create(servers, replicas: 3)
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: sinks(servers), mode: "activity"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")

        var expected = 0
        var keys: [String] = []
        for round in 0..<8 {
            keys += try emulator.createArticles(15, title: "cluster \(round)")
            try emulator.updateArticles(Array(keys.suffix(20)), round: round)
            expected += 15 + min(20, keys.count)
            if round == 2 {
                // The stream's leader goes away without a goodbye while changes keep coming.
                let leader = try PythonTool.run(
                    script: "broker_peers/nats_admin.py",
                    arguments: ["stream-leader", EventsStream.urls(servers), "EVENTS"])
                let name = leader.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                let victim = servers.first { $0.name == name } ?? servers[0]
                victim.kill()
            }
        }
        let alive = servers.filter { $0.port != 0 }
        let stored = EventsStream.waitFor(alive, count: expected, timeout: 120)
        #expect(stored.count == expected, "\(bridge.stderr.suffix(3000))")
        expectOncePerEventInItemOrder(stored)
        #expect(bridge.waitUntil { $0.lines.count >= expected })
        #expect(Set(stored.map(\.msg_id)) == Set(bridge.events.compactMap { $0["id"] as? String }))
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    @Test func aBridgeKilledAndRestartedStoresNoDuplicate() throws {
        let server = try EventsStream.singleServer(prefix: "jetstream-sigkill")
        let emulator = try Emulator()
        defer { emulator.stop() }
        let config = webhookConfig(url: emulator.url, sinks: sinks([server]), operations: true, mode: "activity")
        let bridge = try BridgeProcess.run(config: config)
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.createArticles(50, title: "stored")
        #expect(EventsStream.waitFor([server], count: 50).count == 50)

        // The server freezes: the next events are published (they sit in its socket) but never acknowledged, so
        // the activity cursor cannot move past them. The bridge dies; the server stores them when it thaws; the
        // restarted bridge sends them again from its cursor, and the stream keeps one copy of each.
        server.pause()
        try emulator.createArticles(50, title: "in flight")
        #expect(bridge.waitUntil(timeout: 30) { $0.lines.count >= 100 }, "\(bridge.stderr.suffix(2000))")
        sleep(1)  // time for libnats's flusher to hand the published messages to the socket (makes the case likely)
        bridge.send(SIGKILL)
        #expect(bridge.waitForExit() == SIGKILL)
        server.resume()
        // How many of the dead bridge's messages reached the server (all of them when libnats had flushed them
        // before the kill, as is likely; none or some otherwise): exactly those re-sent ones are duplicates.
        let storedBeforeRestart = EventsStream.waitFor([server], count: 100, timeout: 10).count
        #expect(storedBeforeRestart >= 50, "the 50 acknowledged before the freeze")

        // Each sink keeps its own cursor: the NDJSON sink's moved past the 50, the JetStream sink's did not.
        let restarted = try BridgeProcess.run(config: config, in: bridge.directory)
        let base = try #require(restarted.operationsURL(), "\(restarted.stderr)")
        func metric(_ name: String) -> Double? {
            guard let text = try? HTTPFetch.get(base + "/metrics").text else { return nil }
            return (try? ParsedMetrics(parsing: text))?.value(name)
        }
        // Exactly the 50 unacknowledged events are sent again, under the same ids.
        let delivered = "directus_bridge_broker_delivered_total"
        #expect(restarted.waitUntil(timeout: 30) { _ in metric(delivered) == 50 }, "\(metric(delivered) ?? -1)")
        // An assertion in every case (it was made only when all 50 had reached the server).
        #expect(
            metric("directus_bridge_broker_duplicates_total") == Double(storedBeforeRestart - 50),
            "the stream had \(storedBeforeRestart - 50) of them already")
        let stored = EventsStream.waitFor([server], count: 100, timeout: 60)
        #expect(stored.count == 100, "\(restarted.stderr.suffix(3000))")
        expectOncePerEventInItemOrder(stored)
        #expect(Set(stored.map(\.msg_id)) == Set(bridge.events.compactMap { $0["id"] as? String }))
        restarted.send(SIGTERM)
        #expect(restarted.waitForExit() == 0, "\(restarted.stderr.suffix(2000))")
        // Read after the restarted bridge is gone: a late copy would show as a 101st message.
        #expect(EventsStream.read([server]).count == 100)
    }

    @Test func eventsWaitWhileTheServerIsDownThenArriveInOrder() throws {
        let server = try EventsStream.singleServer(prefix: "jetstream-down")
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: sinks([server]), mode: "activity"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let keys = try emulator.createArticles(10, title: "before")
        #expect(EventsStream.waitFor([server], count: 10).count == 10)

        server.kill()
        try emulator.updateArticles(keys, round: 1)
        try emulator.createArticles(10, title: "while down")
        try emulator.updateArticles(keys, round: 2)
        // Down for 10 s: the bridge keeps the events and says why.
        #expect(bridge.waitForLog("sink failed, retrying", timeout: 30), "\(bridge.stderr.suffix(2000))")
        sleep(10)
        try server.start()
        let stored = EventsStream.waitFor([server], count: 40, timeout: 90)
        #expect(stored.count == 40, "\(bridge.stderr.suffix(3000))")
        expectOncePerEventInItemOrder(stored)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    @Test func checkFindsTheStreamAndStoresATestEvent() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "jetstream-check")
        let server = try NATSServer(name: "checked", in: directory)
        try server.start()
        let emulator = try Emulator()
        defer { emulator.stop() }
        func check(_ arguments: [String] = []) throws -> (code: Int32?, line: String) {
            let run = try BridgeProcess(
                arguments: ["check", "--config", "bridge.yaml"] + arguments, directory: try configDirectory())
            let code = run.waitForExit(timeout: 60)
            return (code, run.lines.first { $0.contains("jetstream sinks[1] nats://") } ?? "missing: \(run.lines)")
        }
        func configDirectory() throws -> URL {
            let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "jetstream-check-run")
            try webhookConfig(url: emulator.url, sinks: sinks([server]))
                .write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
            return directory
        }
        // No stream yet: FAIL, saying which subjects need one.
        let missing = try check()
        #expect(missing.code == 1 && missing.line.hasPrefix("FAIL ") && missing.line.contains("directus.*.*"),
                "\(missing.line)")
        try EventsStream.create([server], replicas: 1)
        let found = try check()
        #expect(
            found.code == 0 && found.line.hasPrefix("ok   ") && found.line.contains("stream EVENTS"), "\(found.line)")
        let sent = try check(["--send-test-event"])
        #expect(sent.code == 0 && sent.line.contains("stored in stream EVENTS"), "\(sent.line)")
        let stored = EventsStream.read([server])
        #expect(stored.count == 1 && stored.first?.subject == "directus.articles.test")
        #expect(stored.first?.msg_id.hasPrefix("evt_test_") == true)
        #expect(stored.first?.event["type"] as? String == "directus.bridge.test")
    }

    /// A stream that takes the subjects of one subscribed collection only overlaps the sink's pattern
    /// (`directus.*.*`) as well as one that takes them all: `check` asks for every subject the sink publishes to. It
    /// said ok before, and the other collection's events then found no stream at run time (no responders), waiting
    /// at the sink's cursor forever.
    @Test func checkFailsWhenNoStreamTakesTheSubjectsOfASubscribedCollection() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "jetstream-check-partial")
        let server = try NATSServer(name: "partial", in: directory)
        try server.start()
        let created = try PythonTool.run(
            script: "broker_peers/nats_admin.py",
            arguments: ["create-stream", server.url, "ARTICLES", "directus.articles.*", "--replicas", "1"])
        try #require(created.status == 0, "create-stream: \(created.stderr)")
        let emulator = try Emulator()
        defer { emulator.stop() }
        func check(_ extra: String) throws -> (code: Int32?, line: String) {
            let run = try TestEnvironment.makeTemporaryDirectory(prefix: "jetstream-check-partial-run")
            try webhookConfig(url: emulator.url, sinks: sinks([server], extra))
                .replacingOccurrences(
                    of: "  - collection: articles\n", with: "  - collection: articles\n  - collection: comments\n")
                .write(to: run.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
            let process = try BridgeProcess(arguments: ["check", "--config", "bridge.yaml"], directory: run)
            let code = process.waitForExit(timeout: 60)
            return (code, process.lines.first { $0.contains("jetstream sinks[1] nats://") } ?? "missing: \(process.lines)")
        }
        let both = try check("")
        #expect(both.code == 1 && both.line.hasPrefix("FAIL "), "\(both.line)")
        #expect(both.line.contains("no stream takes directus.comments.create"), "\(both.line)")
        // The sink that takes articles only is served by that stream.
        let articles = try check("collections: [articles]")
        #expect(articles.line.hasPrefix("ok   ") && articles.line.contains("stream ARTICLES"), "\(articles.line)")
    }

    @Test func aRefusedCredentialIsLoggedAndMakesReadinessFail() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "jetstream-auth")
        let server = try NATSServer(
            name: "guarded", in: directory, authorization: "authorization { token: \"right-token-123\" }")
        try server.start()
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: webhookConfig(
                url: emulator.url, sinks: sinks([server], "token: wrong-token-456"), operations: true, mode: "live"))
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        #expect(bridge.waitForLog("sink failed, retrying", timeout: 30), "\(bridge.stderr.suffix(2000))")
        let line = bridge.stderr.split(separator: "\n").first { $0.contains("sink failed, retrying") } ?? ""
        #expect(line.contains("ERROR") && line.lowercased().contains("authoriz"), "\(line)")
        // After the dispatcher's stuck threshold (30 s) the sink is a readiness reason.
        #expect(
            bridge.waitUntil(timeout: 90) { _ in
                guard let answer = try? HTTPFetch.get(base + "/readyz") else { return false }
                return answer.status == 503 && String(decoding: answer.body, as: UTF8.self).contains("-jetstream-")
            },
            "\(bridge.stderr.suffix(2000))")
        #expect(!bridge.stderr.contains("wrong-token-456"))
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit(timeout: 30) != nil)
    }
}
