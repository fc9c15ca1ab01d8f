import BridgeTestSupport
import Foundation
import Testing

/// A bridge.yaml (live mode unless told) for the emulator at `url` with `sinks` (YAML lines under `sinks:`);
/// `directusExtra` holds more lines under `directus:`, indented by two spaces.
func webhookConfig(
    url: String,
    sinks: String,
    shutdownTimeout: String = "5s",
    maxQueue: Int = 100_000,
    operations: Bool = false,
    mode: String = "live",
    directusExtra: String = ""
) -> String {
    """
    directus:
      url: \(url)
      auth:
        token: admin-static-token
    \(directusExtra)
      heartbeat: 2s
      reconnect:
        initial_delay: 100ms
        max_delay: 1s
    subscriptions:
      - collection: articles
    delivery:
      mode: \(mode)
      poll_interval: 1s
      state_dir: ./state
      max_queue: \(maxQueue)
    sinks:
    \(sinks)
    log:
      level: debug
      stats_interval: \(operations ? "300ms" : "1m")
    http:
      listen: "\(operations ? "127.0.0.1:0" : "")"
    shutdown_timeout: \(shutdownTimeout)
    """
}

/// One webhook sink entry (indented for `webhookConfig`).
func webhookSink(_ url: String, _ extra: String = "") -> String {
    "  - type: webhook\n    url: \(url)\n" + extra.split(separator: "\n").map { "    \($0)\n" }.joined()
}

/// Runs `directus-bridge dlq <arguments>` in `directory` and returns (exit status, stdout lines, stderr).
func dlq(_ arguments: [String], in directory: URL) throws -> (Int32?, [String], String) {
    let process = try BridgeProcess(arguments: ["dlq"] + arguments + ["--config", "bridge.yaml"], directory: directory)
    let status = process.waitForExit()
    return (status, process.lines, process.stderr)
}

/// Webhook requests end to end: signatures, retries, dead letters, ordering, timeouts (real binary, emulator).
@Suite(.serialized) struct WebhookTests {
    @Test func signaturesVerifyWithTheReferencePackageForRawWhsecAndRotatedSecrets() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        let whsec = "whsec_" + Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let newer = "whsec_" + Data((0..<24).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        try receiver.setSecrets([
            "/raw": [["raw": "a raw secret ✓"], ["raw": "some other secret"]],
            "/whsec": [whsec],
            "/rotated": [whsec, ["raw": "next secret"], newer],
        ])
        let sinks =
            webhookSink(receiver.hookURL("/raw"), "secret: \"a raw secret ✓\"\nheaders: { x-source: bridge }")
            + webhookSink(receiver.hookURL("/whsec"), "secret: \(whsec)")
            + webhookSink(receiver.hookURL("/rotated"), "secret: [\(whsec), \"next secret\"]")
            + webhookSink(receiver.hookURL("/deletes-only"), "events: [delete]")
            + "  - type: ndjson\n    path: \"-\"\n"
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url, sinks: sinks))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let key = try emulator.create("articles", ["title": "Grüße \"quoted\" \\ ✓", "status": "draft"])

        #expect(bridge.waitUntil { _ in ((try? receiver.delivered().count) ?? 0) >= 3 }, "\(bridge.stderr)")
        let requests = try receiver.requests()
        let line = try #require(bridge.lines.first)
        let now = Date().timeIntervalSince1970
        #expect(requests.count == 3, "the deletes-only sink's filter passes no create")
        for request in requests {
            #expect(request.body == line, "the webhook body is the event line, byte for byte")
            #expect(request.json["key"] as? String == key)
            #expect(request.id == request.json["id"] as? String)
            #expect(request.headers["content-type"] == "application/json")
            #expect(request.headers["user-agent"]?.hasPrefix("directus-bridge/") == true)
            #expect(abs((Double(request.headers["webhook-timestamp"] ?? "") ?? 0) - now) < 60)
        }
        let byPath = Dictionary(uniqueKeysWithValues: requests.map { ($0.path, $0) })
        // The second raw secret is not the sink's: the reference package must reject it.
        #expect(byPath["/raw"]?.verified.first as? Bool == true)
        #expect(byPath["/raw"]?.verified.last as? String == "No matching signature found")
        #expect(byPath["/raw"]?.headers["x-source"] == "bridge")
        #expect(byPath["/whsec"]?.verified.first as? Bool == true)
        let rotated = try #require(byPath["/rotated"])
        #expect(rotated.verified.count == 3)
        #expect(rotated.verified[0] as? Bool == true && rotated.verified[1] as? Bool == true)
        #expect(rotated.verified[2] as? Bool != true)
        #expect(rotated.headers["webhook-signature"]?.split(separator: " ").count == 2)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        #expect(!bridge.stderr.contains("raw secret"))
    }

    @Test func retriedTwiceThenDeliveredOnceWithOneIdOnTheSchedule() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(steps: [["status": 503], ["status": 503], ["status": 200]])
        let sinks = webhookSink(receiver.hookURL(), "secret: s3cret\nretry_schedule: [300ms, 600ms]")
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url, sinks: sinks))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.create("articles", ["title": "retry me"])

        #expect(bridge.waitUntil { _ in ((try? receiver.delivered().count) ?? 0) >= 1 }, "\(bridge.stderr)")
        // The sink delivers in order: a stray retry of the first event would reach the receiver before the
        // sentinel's request.
        let sentinel = try emulator.create("articles", ["title": "sentinel"])
        let requests = try #require(try receiver.requests(beforeSentinel: sentinel), "\(bridge.stderr)")
        #expect(requests.map(\.status) == [503, 503, 200])
        #expect(Set(requests.map(\.id)).count == 1)
        #expect(Set(requests.map(\.body)).count == 1)
        // Delays: 300 ms then 600 ms, each times a jitter factor in [0.8, 1.2] (upper bounds left loose).
        let gaps = zip(requests.dropFirst(), requests).map { $0.time - $1.time }
        #expect(gaps[0] >= 0.24 && gaps[0] < 3, "gaps \(gaps)")
        #expect(gaps[1] >= 0.48 && gaps[1] < 3, "gaps \(gaps)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    /// A Retry-After longer than the scheduled delay wins, up to the longest entry of the schedule
    /// (docs/RELIABILITY.md; a longer one is clamped, see `HostileReceiverTests`).
    @Test func retryAfterLongerThanTheScheduledDelayIsRespected() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(steps: [["status": 429, "headers": ["retry-after": "2"]]])
        let sinks = webhookSink(receiver.hookURL(), "retry_schedule: [100ms, 3s]")
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url, sinks: sinks))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.create("articles", ["title": "slow down"])

        #expect(bridge.waitUntil { _ in ((try? receiver.delivered().count) ?? 0) >= 1 }, "\(bridge.stderr)")
        let requests = try receiver.requests()
        #expect(requests.map(\.status) == [429, 204])
        #expect(requests[1].time - requests[0].time >= 1.95)
        #expect(requests[0].id == requests[1].id)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    /// A receiver that answers 410 to everything dead-letters every event within a second: the log has ten lines
    /// with their ids and then one total per 10 s, not a line per event (`dlq list` has each).
    @Test func aReceiverRefusingEverythingLogsTenDeadLettersAndThenATotal() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(defaultStep: ["status": 410])
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: webhookSink(receiver.hookURL(), "max_in_flight: 8"))
        )
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.createArticles(40, title: "gone")
        let total = "more webhook deliveries dead-lettered than logged one by one"
        #expect(bridge.waitForLog(total, timeout: TestEnvironment.patient(30)), "\(bridge.stderr.suffix(3000))")
        let lines = bridge.stderr.split(separator: "\n")
        let logged = lines.filter { $0.contains("webhook delivery dead-lettered") }
        let totals = lines.filter { $0.contains(total) }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("count=") }.flatMap { Int($0.dropFirst(6)) }
        }
        #expect(logged.count == 10 && totals == [30], "\(logged.count) lines, totals \(totals)")
        let (status, letters, errors) = try dlq(["list", "--json"], in: bridge.directory)
        #expect(status == 0 && letters.count == 40, "\(letters.count) dead letters \(errors)")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(2000))")
    }

    @Test func aRejectedEventIsDeadLetteredListedAndReplayed() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(steps: [["status": 400, "body": "{\"error\":\"unknown field\"}"]])
        let sinks = webhookSink(receiver.hookURL(), "secret: first-secret")
        try receiver.setSecrets(["/hook": [["raw": "second-secret"]]])
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url, sinks: sinks, operations: true))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let key = try emulator.create("articles", ["title": "rejected"])
        #expect(bridge.waitForLog("webhook delivery dead-lettered"), "\(bridge.stderr)")
        // One level for a dead letter of every sink type (issue 25): error, as a broker sink's.
        let line = bridge.stderr.split(separator: "\n").first { $0.contains("webhook delivery dead-lettered") }
        #expect(line?.contains(" ERROR ") == true, "\(line ?? "")")
        #expect(try receiver.requests().count == 1)  // not retried
        let id = try receiver.requests()[0].id

        // The dead letter shows in /metrics (parsed by prometheus_client) and in the stats line.
        let metricsURL = try #require(bridge.operationsURL(), "\(bridge.stderr)")
        var metrics = try ParsedMetrics(parsing: HTTPFetch.get(metricsURL + "/metrics").text)
        bridge.waitUntil { _ in
            metrics = (try? ParsedMetrics(parsing: HTTPFetch.get(metricsURL + "/metrics").text)) ?? metrics
            return metrics.value("directus_bridge_webhook_dead_letter_depth") == 1
        }
        #expect(metrics.value("directus_bridge_webhook_dead_letter_depth") == 1)
        #expect(metrics.value("directus_bridge_webhook_outbox_depth") == 0)
        #expect(
            metrics.value(
                "directus_bridge_webhook_attempts_total",
                ["outcome": "dead_letter", "status_class": "4xx"]
            ) == 1
        )
        #expect(metrics.value("directus_bridge_webhook_dead_letters_total") == 1)
        #expect(metrics.types["directus_bridge_webhook_delivery_latency_seconds"] == "histogram")
        #expect(bridge.waitForLog("dlq.depth=1"), "\(bridge.stderr.suffix(1500))")

        let (listStatus, table, _) = try dlq(["list"], in: bridge.directory)
        #expect(listStatus == 0)
        #expect(table.count == 1)
        #expect(
            table.first?.split(separator: " ", omittingEmptySubsequences: true).prefix(5).map(String.init)
                == [id, "articles", key, "1", "400"]
        )
        let (_, json, _) = try dlq(
            ["list", "--json", "--collection", "articles", "--since", "10m"],
            in: bridge.directory
        )
        let letter = try #require(
            (try? JSONSerialization.jsonObject(with: Data((json.first ?? "").utf8))) as? [String: Any]
        )
        #expect(letter["id"] as? String == id && letter["last_status"] as? Int == 400)
        #expect(letter["response"] as? String == "{\"error\":\"unknown field\"}")
        #expect((letter["body"] as? [String: Any])?["key"] as? String == key)
        #expect(try dlq(["list", "--collection", "tags"], in: bridge.directory).1.isEmpty)

        let (dryStatus, dry, dryLog) = try dlq(["replay", "--dry-run", "--id", id], in: bridge.directory)
        #expect(dryStatus == 0 && dry.count == 1 && dryLog.contains("would replay 1"))
        // The secret is rotated before the replay: the replayed request is signed with the current one.
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        let rotated = webhookSink(receiver.hookURL(), "secret: second-secret")
        let restarted = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: rotated),
            in: bridge.directory
        )
        #expect(restarted.waitUntilConnected(), "\(restarted.stderr)")
        let (replayStatus, replayed, _) = try dlq(["replay", "--id", id], in: bridge.directory)
        #expect(replayStatus == 0 && replayed.count == 1)
        #expect(restarted.waitUntil { _ in ((try? receiver.delivered().count) ?? 0) >= 1 }, "\(restarted.stderr)")
        let again = try #require(try receiver.delivered().first)
        #expect(again.id == id)
        #expect(again.verified.first as? Bool == true)
        #expect(try dlq(["list"], in: bridge.directory).1.isEmpty)
        restarted.send(SIGTERM)
        #expect(restarted.waitForExit() == 0)
    }

    @Test func purgeDeletesOnlyTheMatchingDeadLettersAndDryRunDeletesNone() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(defaultStep: ["status": 410])
        let bridge = try BridgeProcess.run(
            config: webhookConfig(url: emulator.url, sinks: webhookSink(receiver.hookURL()))
        )
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.create("articles", ["title": "gone 1"])
        try emulator.create("articles", ["title": "gone 2"])
        #expect(
            bridge.waitUntil { _ in ((try? dlq(["list"], in: bridge.directory).1.count) ?? 0) == 2 },
            "\(bridge.stderr)"
        )
        let ids = try receiver.requests().map(\.id)
        #expect(ids.count == 2)

        let (dryStatus, dry, dryLog) = try dlq(["purge", "--dry-run", "--id", ids[0]], in: bridge.directory)
        #expect(dryStatus == 0 && dry.count == 1 && dryLog.contains("would purge 1 dead letter"))
        #expect(try dlq(["list"], in: bridge.directory).1.count == 2)

        let (status, purged, log) = try dlq(["purge", "--id", ids[0]], in: bridge.directory)
        #expect(status == 0 && purged.count == 1 && log.contains("purged 1 dead letter"))
        let left = try dlq(["list", "--json"], in: bridge.directory).1
        #expect(left.count == 1)
        #expect(left.first?.contains("\"id\":\"\(ids[1])\"") == true)
        // Filters that match nothing say so and exit 1 (a typo must not read as done); the letter stays.
        for arguments in [
            ["purge", "--collection", "tags"], ["purge", "--id", "act_999"], ["replay", "--sink", "7"],
            ["replay", "--dry-run", "--id", "act_999"],
        ] {
            let (code, lines, errors) = try dlq(arguments, in: bridge.directory)
            #expect(code == 1 && lines.isEmpty, "\(arguments): \(errors)")
            let filters = arguments.dropFirst().filter { $0 != "--dry-run" }.joined(separator: " ")
            #expect(errors.contains("dlq \(arguments[0]): no dead letter matches \(filters)"), "\(errors)")
        }
        let (_, _, sinkError) = try dlq(["replay", "--sink", "7"], in: bridge.directory)
        #expect(sinkError.contains("--sink 7 is neither a configured sink's id nor a position in sinks (0 to 0)"))
        #expect(try dlq(["list", "--collection", "tags"], in: bridge.directory).0 == 0)  // list only lists
        #expect(try dlq(["list"], in: bridge.directory).1.count == 1)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func fiftyItemsTimesTwentyUpdatesKeepPerItemOrderWithEightInFlight() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(randomDelayMs: [0, 20])
        let sinks = webhookSink(receiver.hookURL(), "max_in_flight: 8")
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url, sinks: sinks))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let created = try emulator.rest("POST", "/items/articles", (0..<50).map { ["title": "item \($0) v0"] })
        let keys = ((created as? [String: Any])?["data"] as? [[String: Any]] ?? []).map { "\($0["id"]!)" }
        #expect(keys.count == 50)
        for round in 1...20 {
            try emulator.rest("PATCH", "/items/articles", keys.map { ["id": Int($0)!, "title": "v\(round)"] })
        }

        #expect(
            bridge.waitUntil(timeout: 60) { _ in ((try? receiver.delivered().count) ?? 0) >= 1050 },
            "delivered \((try? receiver.delivered().count) ?? 0): \(bridge.stderr.suffix(2000))"
        )
        let delivered = try receiver.delivered()
        #expect(delivered.count == 1050)
        #expect(Set(delivered.map(\.id)).count == 1050)
        for key in keys {
            let titles = delivered.filter { $0.json["key"] as? String == key }.map {
                (($0.json["data"] as? [String: Any])?["title"] as? String) ?? "?"
            }
            #expect(titles == ["item \(Int(key)! - Int(keys[0])!) v0"] + (1...20).map { "v\($0)" }, "item \(key)")
        }
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func aHangingReceiverIsCutAtTheTimeoutAndRetried() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.script(steps: [["hang": true]])
        let sinks = webhookSink(receiver.hookURL(), "timeout: 500ms\nretry_schedule: [100ms]")
        let bridge = try BridgeProcess.run(config: webhookConfig(url: emulator.url, sinks: sinks))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.create("articles", ["title": "hang"])

        #expect(bridge.waitUntil { _ in ((try? receiver.delivered().count) ?? 0) >= 1 }, "\(bridge.stderr)")
        let requests = try receiver.requests()
        #expect(requests.count == 2)
        #expect(requests[0].aborted)
        #expect((requests[0].abortedAfter ?? 0) >= 0.45 && (requests[0].abortedAfter ?? 99) < 5)
        #expect(requests[1].time - requests[0].time >= 0.5)
        #expect(requests[1].id == requests[0].id && requests[1].status == 204)
        #expect(bridge.stderr.contains("timeout"))
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
