import BridgeTestSupport
import Foundation
import Testing

/// The operations endpoint of the real binary against the emulator: /metrics parsed by prometheus_client with
/// counters matching the test's changes, /readyz across start, a drop and the reconnect, /healthz, and no secret
/// in any log line.
@Suite(.serialized) struct OperationsTests {
    static let version =
        (try? String(contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("VERSION"), encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""

    @Test func metricsScrapedDuringARunMatchTheChanges() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: liveConfig(url: emulator.url, rest: "http:\n  listen: 127.0.0.1:0\n")
        )
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")
        let base = try #require(bridge.operationsURL(), "no operations address logged: \(bridge.stderr)")

        let first = try emulator.create("articles", ["title": "one"])
        try emulator.create("articles", ["title": "two"])
        try emulator.rest("PATCH", "/items/articles/\(first)", ["status": "published"])
        try emulator.rest("DELETE", "/items/articles/\(first)")
        try emulator.rest("POST", "/items/tags", ["slug": "metrics", "label": "Metrics"])
        #expect(bridge.waitUntil { $0.lines.count >= 5 }, "lines: \(bridge.lines)")

        let scrape = try HTTPFetch.get(base + "/metrics")
        #expect(scrape.status == 200)
        #expect(scrape.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        let metrics = try ParsedMetrics(parsing: scrape.text)

        let articles = ["collection": "articles", "origin": "live"]
        for (name, family) in [
            ("directus_bridge_events_received_total", "directus_bridge_events_received"),
            ("directus_bridge_events_emitted_total", "directus_bridge_events_emitted"),
        ] {
            #expect(metrics.types[family] == "counter")
            #expect(metrics.value(name, articles.merging(["event": "create"]) { $1 }) == 2)
            #expect(metrics.value(name, articles.merging(["event": "update"]) { $1 }) == 1)
            #expect(metrics.value(name, articles.merging(["event": "delete"]) { $1 }) == 1)
            #expect(metrics.value(name, ["collection": "tags", "event": "create", "origin": "live"]) == 1)
        }
        #expect(metrics.value("directus_bridge_lines_written_total", ["path": "-"]) == 5)
        #expect(metrics.types["directus_bridge_event_lag_seconds"] == "histogram")
        #expect(metrics.value("directus_bridge_event_lag_seconds_count") == 5)
        #expect(metrics.value("directus_bridge_event_lag_seconds_bucket", ["le": "+Inf"]) == 5)
        #expect(metrics.value("directus_bridge_queue_depth") == 0)
        #expect(metrics.value("directus_bridge_connected") == 1)
        #expect(metrics.value("directus_bridge_ready") == 1)
        #expect(metrics.value("directus_bridge_subscriptions_live") == 2)
        #expect(metrics.value("directus_bridge_auth_refreshes_total") == 0)
        #expect(metrics.value("directus_bridge_events_dropped_total", ["reason": "queue_full"]) == 0)
        let build = metrics.samples["directus_bridge_build_info"]?.first
        #expect(build?.value == 1)
        #expect(build?.labels["version"] == Self.version)
        #expect(build?.labels["commit"]?.isEmpty == false)
        #expect((metrics.value("directus_bridge_last_event_age_seconds") ?? -1) >= 0)

        // A forced drop shows up as a reconnect with its reason.
        try emulator.control("drop", ["reset": true])
        #expect(bridge.waitUntilConnected(times: 2), "no reconnect: \(bridge.stderr)")
        let after = try ParsedMetrics(parsing: try HTTPFetch.get(base + "/metrics").text)
        let reconnects = after.samples["directus_bridge_reconnects"] ?? []
        #expect(reconnects.reduce(0) { $0 + $1.value } >= 1, "reconnects: \(reconnects)")
        #expect(reconnects.allSatisfy { $0.labels["reason"]?.isEmpty == false })

        #expect(try HTTPFetch.get(base + "/healthz").status == 200)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        #expect(!bridge.stderr.contains("admin-static-token"))
    }

    @Test func readinessFollowsStartDropAndReconnect() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        // Keep the socket out at first, so the bridge is up (and authenticated over REST) but not ready.
        try emulator.control("refuse-upgrades", ["ms": 1500, "status": 503])
        let bridge = try BridgeProcess.run(
            config: liveConfig(
                url: emulator.url,
                auth: "    email: admin@example.com\n    password: admin-password",
                rest: "http:\n  listen: \"[::1]:0\"\n"
            )
        )
        let base = try #require(bridge.operationsURL(), "no operations address logged: \(bridge.stderr)")
        #expect(base.hasPrefix("http://[::1]:"))

        // 503 at start, with a JSON body that says why.
        let starting = try HTTPFetch.get(base + "/readyz")
        #expect(starting.status == 503)
        #expect(starting.headers["content-type"] == "application/json")
        #expect(starting.json["ready"] as? Bool == false)
        let reasons = starting.json["reasons"] as? [String] ?? []
        #expect(reasons.contains { $0.hasPrefix("not connected to Directus") }, "reasons: \(reasons)")
        #expect(try HTTPFetch.get(base + "/healthz").status == 200)

        // 200 once connected and subscribed.
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")
        #expect(bridge.waitUntil { _ in (try? HTTPFetch.get(base + "/readyz").status) == 200 })
        let ready = try HTTPFetch.get(base + "/readyz")
        #expect(ready.json["ready"] as? Bool == true)
        #expect(ready.json["reasons"] as? [String] == [])

        // 503 while Directus is down (a restart refuses connections for a while), then 200 after the reconnect.
        try emulator.control("restart", ["down_ms": 1500])
        #expect(
            bridge.waitUntil { _ in (try? HTTPFetch.get(base + "/readyz").status) == 503 },
            "readyz never went 503: \(bridge.stderr)"
        )
        let down = try HTTPFetch.get(base + "/readyz")
        #expect((down.json["reasons"] as? [String] ?? []).isEmpty == false)
        #expect(bridge.waitUntilConnected(times: 2), "no reconnect: \(bridge.stderr)")
        #expect(bridge.waitUntil { _ in (try? HTTPFetch.get(base + "/readyz").status) == 200 })

        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        #expect(!bridge.stderr.contains("admin-password"))
    }

    @Test func statsLineIsLoggedAtTheConfiguredInterval() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(
            config: liveConfig(url: emulator.url).replacingOccurrences(
                of: "log:\n  level: debug",
                with: "log:\n  level: info\n  stats_interval: 200ms"
            )
        )
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")
        try emulator.create("articles", ["title": "counted"])
        #expect(bridge.waitUntil { $0.lines.count >= 1 })
        #expect(
            bridge.waitUntil { $0.stderr.contains("events.count=1 ") },
            "no stats line counted the event: \(bridge.stderr)"
        )
        let statsLine = bridge.stderr.split(separator: "\n").first {
            $0.contains(" stats ") && $0.contains("events.count=1 ")
        }
        for key in ["events.per_second=", "lag.p50=", "lag.p99=", "queue.depth=0"] {
            #expect(statsLine?.contains(key) == true, "\(key) missing in \(statsLine ?? "")")
        }
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    /// What no retry can mend stops the start (exit 78). A port in use is retried instead (`ListenRetryTests`).
    @Test func aListenAddressNotOnThisHostIsAConfigurationError() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        // 192.0.2.1 (TEST-NET-1) is on no interface of the machine: EADDRNOTAVAIL.
        let bridge = try BridgeProcess.run(
            config: liveConfig(url: emulator.url, rest: "http:\n  listen: 192.0.2.1:9464\n")
        )
        #expect(bridge.waitForExit() == 78)
        #expect(bridge.stderr.contains("cannot listen on 192.0.2.1:9464"), "stderr: \(bridge.stderr)")
    }
}
