import BridgeTestSupport
import Foundation
import Testing

/// packaging/grafana/directus-bridge.json asks only for metrics the bridge serves: every metric name in the
/// dashboard's queries is among the samples of the real binary's /metrics, scraped after the events that create
/// the labelled series (a snapshot and changes in activity mode, webhook deliveries with a retry and a dead letter, a
/// reconnect).
@Suite(.serialized) struct DashboardTests {
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

    @Test func everyMetricTheDashboardQueriesIsServed() throws {
        let names = try Self.queriedMetricNames()
        // The extraction itself must find the panels' metrics, or this test would pass on an empty set.
        #expect(names.count >= 25, "queried metrics: \(names.sorted())")
        #expect(names.isSuperset(of: ["directus_bridge_webhook_attempts_total", "process_resident_memory_bytes"]))

        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        // The first attempt is retried (500), the second is dead-lettered (410), the rest are delivered.
        try receiver.script(steps: [["status": 500], ["status": 410]])
        let sinks =
            "  - type: ndjson\n    path: \"-\"\n"
            + webhookSink(receiver.hookURL(), "retry_schedule: [100ms]\nmax_attempts: 3")
        // A snapshot publishes the progress gauges labelled by subscription.
        let config = webhookConfig(url: emulator.url, sinks: sinks, operations: true, mode: "activity")
            .replacingOccurrences(of: "  - collection: articles\n", with: "  - collection: articles\n    snapshot: true\n")
        let bridge = try BridgeProcess.run(config: config)
        defer { bridge.send(SIGKILL) }
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")
        let base = try #require(bridge.operationsURL(), "no operations address logged: \(bridge.stderr)")

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
        let served = Set(scrape.samples.values.joined().map(\.name))
        let missing = names.subtracting(served).sorted()
        #expect(missing.isEmpty, "the dashboard queries metrics that /metrics does not serve: \(missing)")
        #expect((scrape.value("process_resident_memory_bytes") ?? 0) > 1_000_000)
        // A counter, named as one: threads the system refused to start (none here).
        #expect(scrape.value("directus_bridge_thread_start_failures_total") == 0)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
