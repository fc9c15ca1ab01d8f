import BridgeTestSupport
import Foundation
import Testing

/// The real binary with a `type: redis` sink against Debian's redis-server, read back with redis-py: every change
/// appended once as the contract's fields with its NDJSON line as the payload, in order per item; a refused entry
/// is a dead letter (`dlq list --sink`, `dlq replay`); `check` and `--send-test-event`.
@Suite(.serialized, .timeLimit(.minutes(10))) struct RedisSinkTests {
    /// An NDJSON sink on stdout (to compare bodies), then a redis sink named `cache` with `extra` keys.
    func sinks(_ server: RedisServer, _ extra: String = "") -> String {
        "  - type: ndjson\n    path: \"-\"\n  - type: redis\n    name: cache\n    url: \(server.url())\n"
            + extra.split(separator: "\n").map { "    \($0)\n" }.joined()
    }

    /// Waits (60 s, stretched) until `stream` has `count` entries; returns them.
    func waitForEntries(_ server: RedisServer, _ stream: String, count: Int, password: String? = nil) throws
        -> [RedisStreamRecord]
    {
        let credentials = password.map { ":" + $0 }
        let deadline = Date().addingTimeInterval(TestEnvironment.patient(60))
        var entries = try server.readStream(stream, credentials: credentials)
        while entries.count < count && Date() < deadline {
            usleep(200_000)
            entries = try server.readStream(stream, credentials: credentials)
        }
        return entries
    }

    @Test func everyChangeIsAppendedOnceWithItsEventLineAsPayload() throws {
        let server = try RedisServer(in: try TestEnvironment.makeTemporaryDirectory(prefix: "redis-sink"))
        try server.start()
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url, sinks: sinks(server), mode: "live"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")

        let keys = try emulator.createArticles(20, title: "redis")
        try emulator.updateArticles(Array(keys.prefix(5)), round: 1)
        try emulator.rest("DELETE", "/items/articles/\(keys[19])")
        let entries = try waitForEntries(server, "directus.articles", count: 26)
        #expect(entries.count == 26, "\(bridge.stderr.suffix(3000))")
        #expect(Set(entries.compactMap { $0.fields["id"] }).count == 26, "an event appended twice")
        #expect(bridge.waitUntil { $0.lines.count >= 26 })
        #expect(Set(entries.compactMap { $0.fields["payload"] }) == Set(bridge.lines))
        for entry in entries {
            let event = try #require(
                try JSONSerialization.jsonObject(with: Data((entry.fields["payload"] ?? "").utf8)) as? [String: Any]
            )
            #expect(entry.fields["id"] == event["id"] as? String && entry.fields["type"] == event["type"] as? String)
            #expect(entry.fields["collection"] == "articles" && entry.fields["key"] == "\(event["key"] ?? "")")
            #expect(entry.fields["event"] == event["event"] as? String)
        }
        // Per item, in the order the changes were made: the creation before the update.
        for key in keys.prefix(5) {
            let kinds = entries.filter { $0.fields["key"] == key }.compactMap { $0.fields["event"] }
            #expect(kinds == ["create", "update"], "item \(key): \(kinds)")
        }
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    /// `format: cloudevents`: the payload is the CloudEvent; the fields still carry the event's own id and type.
    @Test func cloudEventsFormatPutsTheCloudEventInThePayload() throws {
        let server = try RedisServer(in: try TestEnvironment.makeTemporaryDirectory(prefix: "redis-sink-ce"))
        try server.start()
        let emulator = try Emulator()
        defer { emulator.stop() }
        let entry = "  - type: redis\n    name: cache\n    url: \(server.url())\n    format: cloudevents\n"
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url, sinks: entry, mode: "activity"))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let keys = try emulator.createArticles(3, title: "cloud")
        let entries = try waitForEntries(server, "directus.articles", count: 3)
        #expect(entries.count == 3, "\(bridge.stderr.suffix(2000))")
        for entry in entries {
            let event = try #require(
                try JSONSerialization.jsonObject(with: Data((entry.fields["payload"] ?? "").utf8)) as? [String: Any]
            )
            #expect(event["specversion"] as? String == "1.0" && event["id"] as? String == entry.fields["id"])
            #expect(event["type"] as? String == entry.fields["type"] && entry.fields["type"] == "directus.items.create")
            #expect(keys.contains(entry.fields["key"] ?? ""))
        }
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    @Test func anEntryTheServerRefusesIsADeadLetterAndIsReplayedOnceTheKeyIsFixed() throws {
        let server = try RedisServer(in: try TestEnvironment.makeTemporaryDirectory(prefix: "redis-sink-dlq"))
        try server.start()
        // The stream of collection "articles" is taken by a plain string: XADD answers WRONGTYPE.
        try redisCLI(server, ["SET", "directus.articles", "not a stream"])
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: sinks(server), operations: true, mode: "activity")
        )
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let key = try #require(try emulator.createArticles(1, title: "refused").first)
        #expect(bridge.waitForLog("stored as a dead letter", timeout: 30), "\(bridge.stderr.suffix(2000))")
        let (listStatus, listed, listErrors) = try dlq(["list", "--json", "--sink", "cache"], in: bridge.directory)
        #expect(listStatus == 0 && listed.count == 1, "\(listed) \(listErrors)")
        let letter = try #require(
            listed.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        )
        #expect(letter["key"] as? String == key && letter["sink"] as? String == "cache", "\(letter)")
        #expect((letter["reason"] as? String)?.contains("WRONGTYPE") == true, "\(letter)")

        // The operator removes the string; the replayed event is appended under its event id.
        try redisCLI(server, ["DEL", "directus.articles"])
        let (replayStatus, _, replayErrors) = try dlq(["replay", "--sink", "cache"], in: bridge.directory)
        #expect(replayStatus == 0, "\(replayErrors)")
        let entries = try waitForEntries(server, "directus.articles", count: 1)
        #expect(entries.count == 1 && entries.first?.fields["id"] == letter["id"] as? String, "\(entries)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    /// A full server (`maxmemory` reached, `noeviction`: every write answered `OOM`) is a sink that is full, not
    /// one that refuses: the events wait and are retried, none becomes a dead letter, `/readyz` names the sink; once
    /// the operator frees memory every event is appended, each once.
    @Test func aFullServerHoldsEventsBackAndLosesNoneOnceMemoryIsFreed() throws {
        let server = try RedisServer(in: try TestEnvironment.makeTemporaryDirectory(prefix: "redis-sink-full"))
        try server.start()
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: sinks(server), operations: true, mode: "activity")
        )
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.createArticles(2, title: "before")
        #expect(try waitForEntries(server, "directus.articles", count: 2).count == 2)

        try redisCLI(server, ["CONFIG", "SET", "maxmemory-policy", "noeviction"])
        try redisCLI(server, ["CONFIG", "SET", "maxmemory", "1"])
        try emulator.createArticles(30, title: "while full")
        #expect(bridge.waitForLog("OOM", timeout: 60), "\(bridge.stderr.suffix(2000))")
        #expect(
            bridge.waitUntil(timeout: 90) { _ in
                guard let answer = try? HTTPFetch.get(base + "/readyz") else { return false }
                return answer.status == 503 && String(decoding: answer.body, as: UTF8.self).contains("cache")
            },
            "\(bridge.stderr.suffix(2000))"
        )
        #expect(!bridge.stderr.contains("stored as a dead letter"), "\(bridge.stderr.suffix(2000))")

        try redisCLI(server, ["CONFIG", "SET", "maxmemory", "0"])
        let entries = try waitForEntries(server, "directus.articles", count: 32)
        #expect(entries.count == 32, "\(bridge.stderr.suffix(2000))")
        #expect(Set(entries.compactMap { $0.fields["id"] }).count == entries.count, "an event appended twice")
        let (listStatus, listed, listErrors) = try dlq(["list", "--json", "--sink", "cache"], in: bridge.directory)
        #expect(listStatus == 0 && listed.isEmpty, "\(listed) \(listErrors)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit(timeout: 30) == 0, "\(bridge.stderr.suffix(2000))")
    }

    /// A server that is gone while events wait: `directus_bridge_broker_healthy` says 0 for the sink while it fails,
    /// and 1 again once the server is back and the events are appended. Before, the gauge was set only when the
    /// runner ticked between batches (never during a failing streak, which retries one batch) and read 1 with no
    /// client at all: it said 1 throughout (docs/RELIABILITY.md, "The broker sinks at scale").
    @Test func aServerThatIsGoneShowsInTheHealthGauge() throws {
        let server = try RedisServer(in: try TestEnvironment.makeTemporaryDirectory(prefix: "redis-sink-gone"))
        try server.start()
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: sinks(server), operations: true, mode: "activity")
        )
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let healthy = { () -> Double? in
            guard let text = try? HTTPFetch.get(base + "/metrics").text else { return nil }
            return try? ParsedMetrics(parsing: text).value("directus_bridge_broker_healthy", ["sink": "cache"])
        }
        try emulator.createArticles(2, title: "before")
        #expect(try waitForEntries(server, "directus.articles", count: 2).count == 2)
        #expect(bridge.waitUntil(timeout: 30) { _ in healthy() == 1 }, "\(bridge.stderr.suffix(2000))")

        server.kill()
        try emulator.createArticles(3, title: "while gone")
        #expect(bridge.waitForLog("sink failed, retrying", timeout: 60), "\(bridge.stderr.suffix(2000))")
        #expect(
            bridge.waitUntil(timeout: 30) { _ in healthy() == 0 },
            "broker_healthy \(String(describing: healthy())): \(bridge.stderr.suffix(2000))"
        )

        try server.start()
        #expect(try waitForEntries(server, "directus.articles", count: 5).count == 5, "\(bridge.stderr.suffix(2000))")
        #expect(bridge.waitUntil(timeout: 30) { _ in healthy() == 1 }, "\(bridge.stderr.suffix(2000))")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit(timeout: 30) == 0, "\(bridge.stderr.suffix(2000))")
    }

    /// The password changes under a running bridge: the sink's next connection is refused (error log, `/readyz`
    /// 503 naming the sink after the stuck threshold); once the password is back, the waiting event arrives and the
    /// bridge is ready again.
    @Test func credentialsRefusedAfterTheStartAreReportedAndRecoveredFrom() throws {
        let server = try RedisServer(
            in: try TestEnvironment.makeTemporaryDirectory(prefix: "redis-sink-auth"),
            password: "right-pw-123"
        )
        try server.start()
        let emulator = try Emulator()
        defer { emulator.stop() }
        let entry = "  - type: redis\n    name: cache\n    url: \(server.url(credentials: ":right-pw-123"))\n"
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: entry, operations: true, mode: "activity")
        )
        let base = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.createArticles(2, title: "before")
        #expect(try waitForEntries(server, "directus.articles", count: 2, password: "right-pw-123").count == 2)

        try redisCLI(server, password: "right-pw-123", ["CONFIG", "SET", "requirepass", "other-pw-456"])
        try? redisCLI(server, password: "other-pw-456", ["CLIENT", "KILL", "TYPE", "normal"])
        try emulator.createArticles(1, title: "refused")
        #expect(bridge.waitForLog("WRONGPASS", timeout: 60), "\(bridge.stderr.suffix(2000))")
        #expect(
            bridge.waitUntil(timeout: 90) { _ in
                guard let answer = try? HTTPFetch.get(base + "/readyz") else { return false }
                return answer.status == 503 && String(decoding: answer.body, as: UTF8.self).contains("cache")
            },
            "\(bridge.stderr.suffix(2000))"
        )
        #expect(!bridge.stderr.contains("right-pw-123"))

        try redisCLI(server, password: "other-pw-456", ["CONFIG", "SET", "requirepass", "right-pw-123"])
        #expect(try waitForEntries(server, "directus.articles", count: 3, password: "right-pw-123").count == 3)
        #expect(
            bridge.waitUntil(timeout: 90) { _ in (try? HTTPFetch.get(base + "/readyz"))?.status == 200 },
            "\(bridge.stderr.suffix(2000))"
        )
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit(timeout: 30) == 0, "\(bridge.stderr.suffix(2000))")
    }

    @Test func checkConnectsAndAppendsATestEvent() throws {
        let server = try RedisServer(in: try TestEnvironment.makeTemporaryDirectory(prefix: "redis-sink-check"))
        try server.start()
        let emulator = try Emulator()
        defer { emulator.stop() }
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "redis-check-run")
        try webhookConfig(url: emulator.url, sinks: sinks(server))
            .write(to: directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        func check(_ arguments: [String] = []) throws -> (code: Int32?, line: String) {
            try sinkCheckLine(in: directory, "redis cache redis://", arguments)
        }
        let connected = try check()
        #expect(
            connected.code == 0 && connected.line.hasPrefix("ok   ") && connected.line.contains("directus.articles"),
            "\(connected.line)"
        )
        let sent = try check(["--send-test-event"])
        #expect(sent.code == 0 && sent.line.contains("appended to directus.articles"), "\(sent.line)")
        let entries = try server.readStream("directus.articles")
        #expect(entries.count == 1 && entries.first?.fields["id"]?.hasPrefix("evt_test_") == true, "\(entries)")
        // The contract's fields, as the sink's entries have them (the test entry had only id, event and payload).
        let fields = entries.first?.fields ?? [:]
        #expect(Set(fields.keys) == ["id", "type", "collection", "key", "event", "payload"], "\(fields)")
        #expect(
            fields["type"] == "directus.bridge.test" && fields["collection"] == "articles" && fields["key"] == ""
                && fields["event"] == "test",
            "\(fields)")
        // A full server refuses the append: the remedy is its memory, not the ACL (which it said before).
        try redisCLI(server, ["CONFIG", "SET", "maxmemory-policy", "noeviction"])
        try redisCLI(server, ["CONFIG", "SET", "maxmemory", "1"])
        let full = try check(["--send-test-event"])
        #expect(
            full.code == 1 && full.line.contains("OOM") && full.line.contains("maxmemory")
                && !full.line.contains("ACL"),
            "\(full.line)"
        )
        server.kill()
        let down = try check()
        #expect(down.code == 1 && down.line.hasPrefix("FAIL ") && down.line.contains("cannot connect"), "\(down.line)")
    }
}

/// Runs `redis-cli` against `server` (as the default user with `password`) with `arguments`; throws when it fails.
func redisCLI(_ server: RedisServer, password: String? = nil, _ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
    process.arguments =
        ["-p", String(server.port)] + (password.map { ["-a", $0, "--no-auth-warning"] } ?? []) + arguments
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    guard ChildExit.wait(process) == 0 else { throw BrokerServerError.exited(name: "redis-cli", log: "") }
}
