import BridgeTestSupport
import Foundation
import Testing

/// packaging/grafana/directus-bridge.json and packaging/prometheus/alerts.yaml ask only for metrics the bridge serves:
/// every metric name in the dashboard's queries and the alerts' expressions is among the samples of the real
/// binary's /metrics — one bridge with NDJSON and webhook sinks (a snapshot and changes in activity mode, webhook
/// deliveries with a retry and a dead letter, a reconnect), one with Kafka, JetStream, Redis and AMQP sinks and shared
/// state (role and lease). The dashboard covers every sink type and every alert's metric; promtool checks and
/// unit-tests the rules.
@Suite(.serialized) struct DashboardTests {
    static let alertsURL = TestEnvironment.repositoryRoot.appendingPathComponent("packaging/prometheus/alerts.yaml")
    static let dashboardURL = TestEnvironment.repositoryRoot.appendingPathComponent(
        "packaging/grafana/directus-bridge.json"
    )

    /// Every `directus_bridge_…` and `process_…` name in the dashboard's queries (panel targets and variables).
    static func queriedMetricNames() throws -> Set<String> {
        let root = try JSONSerialization.jsonObject(with: Data(contentsOf: dashboardURL))
        var queries: [String] = []
        func collect(_ value: Any) {
            if let object = value as? [String: Any] {
                for (key, child) in object {
                    if ["expr", "query", "definition"].contains(key), let text = child as? String {
                        queries.append(text)
                    }
                    collect(child)
                }
            } else if let array = value as? [Any] {
                array.forEach(collect)
            }
        }
        collect(root)
        return try metricNames(in: queries)
    }

    /// Every `directus_bridge_…` name in the alert rules' expressions.
    static func alertMetricNames() throws -> Set<String> {
        let text = try String(contentsOf: alertsURL, encoding: .utf8)
        let expressions = text.split(separator: "\n").filter {
            $0.trimmingCharacters(in: .whitespaces).hasPrefix("expr:")
        }
        return try metricNames(in: expressions.map(String.init))
    }

    /// The metric names in PromQL `queries` (a histogram's `_bucket` series by its own name, as /metrics serves it).
    static func metricNames(in queries: [String]) throws -> Set<String> {
        let pattern = try NSRegularExpression(pattern: #"\b(?:directus_bridge|process)_[a-z0-9_]+"#)
        var names = Set<String>()
        for query in queries {
            let range = NSRange(query.startIndex..., in: query)
            for match in pattern.matches(in: query, range: range) {
                if let found = Range(match.range, in: query) { names.insert(String(query[found])) }
            }
        }
        return names
    }

    /// The sum of the samples called `name` in Prometheus text (cheap enough to poll, unlike the full parser).
    static func total(_ name: String, in text: String) -> Double {
        text.split(separator: "\n").reduce(0) { sum, line in
            guard line.hasPrefix(name + "{") || line.hasPrefix(name + " "), let value = line.split(separator: " ").last
            else { return sum }
            return sum + (Double(value) ?? 0)
        }
    }

    /// The dashboard has panels for every sink type, drops, lag, retention, role and lease, and every alert's metric.
    @Test func theDashboardCoversEverySinkTypeAndEveryAlert() throws {
        let names = try Self.queriedMetricNames()
        let alerts = try Self.alertMetricNames()
        #expect(alerts.count >= 8, "alert metrics: \(alerts.sorted())")
        #expect(
            alerts.subtracting(names).isEmpty,
            "alerts on metrics no panel shows: \(alerts.subtracting(names).sorted())"
        )
        let required: Set = [
            "directus_bridge_lines_written_total", "directus_bridge_webhook_attempts_total",
            "directus_bridge_broker_delivered_total", "directus_bridge_sink_events_total",
            "directus_bridge_sink_dropped_total", "directus_bridge_sink_lag_rows",
            "directus_bridge_activity_retention_lost_total", "directus_bridge_role",
            "directus_bridge_lease_age_seconds",
            "process_start_time_seconds", "process_open_fds", "process_max_fds",
        ]
        #expect(required.subtracting(names).isEmpty, "not on the dashboard: \(required.subtracting(names).sorted())")
    }

    /// The Redis Streams row shows the broker families of the sinks its `redis_sink` variable selects, and the
    /// variable's default keeps a redis sink's positional id (`<index>-redis-<hash>`) and drops other sinks' ids.
    @Test func theRedisRowShowsTheBrokerFamiliesOfRedisSinks() throws {
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.dashboardURL)) as? [String: Any])
        let panels = root["panels"] as? [[String: Any]] ?? []
        let redis = panels.filter { ($0["title"] as? String)?.hasPrefix("Redis ") == true && $0["type"] as? String != "row" }
        let expressions = redis.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        #expect(redis.count >= 3 && expressions.allSatisfy { $0.contains(#"sink=~"$redis_sink""#) }, "\(expressions)")
        let families = [
            "delivered_total", "duplicates_total", "resent_total", "outstanding", "healthy", "rejected_total",
            "dead_letters_total",
        ].map { "directus_bridge_broker_" + $0 }
        #expect(try Self.metricNames(in: expressions) == Set(families), "\(expressions)")
        let variables = (root["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []
        let variable = try #require(variables.first { $0["name"] as? String == "redis_sink" })
        let all = try Regex(try #require(variable["allValue"] as? String))
        let shown = try Regex(String(try #require(variable["regex"] as? String).dropFirst().dropLast()))
        let positional = "2-redis-" + "0a1b2c3d"
        #expect(positional.wholeMatch(of: all) != nil && positional.firstMatch(of: shown) != nil)
        #expect("0-kafka-0a1b2c3d".wholeMatch(of: all) == nil && "0-kafka-0a1b2c3d".firstMatch(of: shown) == nil)
    }

    /// `promtool check rules` and `promtool test rules` (Debian's prometheus package) on packaging/prometheus.
    @Test func theAlertRulesAreValidAndFireOnTheirTestSeries() throws {
        let directory = Self.alertsURL.deletingLastPathComponent()
        for arguments in [["check", "rules", "alerts.yaml"], ["test", "rules", "alerts.test.yaml"]] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/promtool")
            process.arguments = arguments
            process.currentDirectoryURL = directory
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(ChildExit.wait(process) == 0, "promtool \(arguments.joined(separator: " ")): \(text)")
            #expect(text.contains("SUCCESS"), "\(text)")
        }
    }

    @Test func everyMetricTheDashboardAndTheAlertsQueryIsServed() throws {
        let names = try Self.queriedMetricNames().union(try Self.alertMetricNames())
        // The extraction itself must find the panels' metrics, or this test would pass on an empty set.
        #expect(names.count >= 40, "queried metrics: \(names.sorted())")
        #expect(names.isSuperset(of: ["directus_bridge_webhook_attempts_total", "process_resident_memory_bytes"]))
        let served = try Self.servedWithWebhookSinks().union(try Self.servedWithBrokerSinksAndSharedState())
        let missing = names.subtracting(served).sorted()
        #expect(missing.isEmpty, "the dashboard or the alerts query metrics that /metrics does not serve: \(missing)")
    }

    /// The metric names of a live bridge with NDJSON and webhook sinks, scraped after a snapshot, deliveries with a
    /// retry and a dead letter, and a reconnect.
    static func servedWithWebhookSinks() throws -> Set<String> {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        // The first attempt is retried, the second dead-lettered; a snapshot publishes the progress gauges.
        let bridge = try BridgeProcess.run(config: try retryAndDeadLetterConfig(emulator: emulator, receiver: receiver))
        defer { bridge.send(SIGKILL) }
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")
        let base = try #require(bridge.operationsURL(), "no operations address logged: \(bridge.stderr)")
        // Series known at start are there at zero before anything happened.
        let first = try HTTPFetch.get(base + "/metrics").text
        for series in [
            #"directus_bridge_reconnects_total{reason="heartbeat_timeout"} 0"#,
            #"directus_bridge_events_emitted_total{collection="articles",event="update",origin="backfill"} 0"#,
        ] {
            #expect(first.contains(series), "\(series) missing before the first event")
        }

        #expect(bridge.waitForLog("snapshot done", timeout: 20), "\(bridge.stderr)")
        for title in ["one", "two", "three"] { try emulator.create("articles", ["title": title]) }
        let created = { (bridge: BridgeProcess) in bridge.events.filter { $0["event"] as? String == "create" }.count }
        #expect(bridge.waitUntil(timeout: 20) { created($0) >= 3 }, "lines: \(bridge.lines)")
        let answered = bridge.waitUntil(timeout: 20) { _ in
            let requests = (try? receiver.requests()) ?? []
            return requests.contains { $0.status == 410 } && requests.filter(\.delivered).count >= 2
        }
        #expect(answered, "receiver saw: \(((try? receiver.requests()) ?? []).map { $0.status ?? 0 })")
        let deadLettered = bridge.waitUntil(timeout: 20) { _ in
            let text = (try? HTTPFetch.get(base + "/metrics").text) ?? ""
            return Self.total("directus_bridge_webhook_dead_letters_total", in: text) >= 1
        }
        #expect(deadLettered, "no dead letter counted: \(bridge.stderr)")
        try emulator.control("drop", ["reset": true])
        #expect(bridge.waitUntilConnected(times: 2), "no reconnect: \(bridge.stderr)")

        let scrape = try ParsedMetrics(parsing: try HTTPFetch.get(base + "/metrics").text)
        #expect((scrape.value("process_resident_memory_bytes") ?? 0) > 1_000_000)
        #expect((scrape.value("process_open_fds") ?? 0) >= 3 && (scrape.value("process_max_fds") ?? 0) >= 64)
        let started = scrape.value("process_start_time_seconds") ?? 0
        #expect(abs(Date().timeIntervalSince1970 - started) < 3600, "process_start_time_seconds \(started)")
        // A counter, named as one: threads the system refused to start (none here).
        #expect(scrape.value("directus_bridge_thread_start_failures_total") == 0)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        return Set(scrape.samples.values.joined().map(\.name))
    }

    /// The metric names of a live bridge with Kafka, JetStream, Redis and AMQP sinks and shared state on the same NATS
    /// server (the broker series, role and lease), after changes reached the four brokers.
    static func servedWithBrokerSinksAndSharedState() throws -> Set<String> {
        let cluster = try KafkaMockPeer(brokers: 1)
        try cluster.createTopic("directus.articles", partitions: 1, replicationFactor: 1)
        let server = try EventsStream.singleServer(prefix: "dashboard-brokers")
        let redis = try RedisServer(in: try TestEnvironment.makeTemporaryDirectory(prefix: "dashboard-redis"))
        try redis.start()
        let rabbit = try RabbitMQServer(in: try TestEnvironment.makeTemporaryDirectory(prefix: "dashboard-rabbitmq"))
        try rabbit.start()
        try AMQPAdmin.run(["setup", rabbit.url(), "directus", "dashboard", "#"])
        let emulator = try Emulator()
        defer { emulator.stop() }
        let sinks = """
              - name: redis
                type: redis
                url: \(redis.url())
              - name: kafka
                type: kafka
                brokers: ["\(cluster.bootstrapServers)"]
              - name: jetstream
                type: jetstream
                servers: ["\(server.url)"]
                ack_timeout: 1s
              - name: amqp
                type: amqp
                url: \(rabbit.url())
            """
        let config =
            webhookConfig(url: emulator.url, sinks: sinks, operations: true, mode: "activity")
            + "\nstate:\n  backend: jetstream\n  servers: [\"\(server.url)\"]\n  bucket: dashboard\n  lease: 3s\n"
        let bridge = try BridgeProcess.run(config: config)
        defer { bridge.send(SIGKILL) }
        let base = try #require(bridge.operationsURL(), "no operations address logged: \(bridge.stderr)")
        // Changes made before the active bridge read the newest activity id would be before its cursor.
        #expect(bridge.waitForLog("became active", timeout: 20), "\(bridge.stderr.suffix(3000))")
        #expect(bridge.waitForLog("activity cursor created", timeout: 20), "\(bridge.stderr.suffix(3000))")
        for title in ["one", "two"] { try emulator.create("articles", ["title": title]) }
        let delivered = bridge.waitUntil(timeout: 30) { _ in
            let text = (try? HTTPFetch.get(base + "/metrics").text) ?? ""
            return Self.total("directus_bridge_broker_delivered_total", in: text) >= 8
        }
        #expect(
            delivered,
            "the brokers did not get both changes: \(bridge.stderr.suffix(3000)) \((try? HTTPFetch.get(base + "/metrics").text) ?? "")"
        )
        let scrape = try ParsedMetrics(parsing: try HTTPFetch.get(base + "/metrics").text)
        #expect(scrape.value("directus_bridge_role", ["role": "active"]) == 1)
        #expect(scrape.value("directus_bridge_broker_delivered_total", ["sink": "redis"]) == 2)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        return Set(scrape.samples.values.joined().map(\.name))
    }
}
