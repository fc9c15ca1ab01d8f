import BridgeTestSupport
import Foundation
import Testing

/// What the shared-state suites share: the bridges' config (activity mode, NDJSON to `out.ndjson` in each bridge's
/// directory, `state.backend: jetstream`), reading what a bridge delivered, and starting an active/standby pair.
protocol SharedStateRig {}

extension SharedStateRig {
    /// One nats-server started in a fresh directory named after `prefix`.
    func startedSingleServer(_ prefix: String) throws -> NATSServer {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: prefix)
        let server = try NATSServer(name: "single", in: directory)
        try server.start()
        return server
    }

    func config(_ emulator: Emulator, _ servers: [NATSServer], lease: String = "5s") -> String {
        let urls = servers.map { "\"\($0.url)\"" }.joined(separator: ", ")
        return activityConfig(
            url: emulator.url, pollInterval: "1s", subscriptions: "  - collection: articles", output: "out.ndjson",
            extra: """
                http:
                  listen: 127.0.0.1:0
                state:
                  backend: jetstream
                  servers: [\(urls)]
                  bucket: bridge_test
                  name: orders
                  lease: \(lease)
                """)
    }

    /// Event ids a bridge wrote to its NDJSON file so far.
    func delivered(_ bridge: BridgeProcess) -> [String] { lines(bridge).map(\.id) }

    /// The complete lines a bridge wrote to its NDJSON file so far, with their event ids.
    func lines(_ bridge: BridgeProcess) -> [(id: String, line: String)] {
        let text = (try? String(contentsOf: bridge.directory.appendingPathComponent("out.ndjson"), encoding: .utf8)) ?? ""
        var lines = text.split(separator: "\n").map(String.init)
        if !text.hasSuffix("\n"), !lines.isEmpty { lines.removeLast() }
        return lines.compactMap { line in
            (((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["id"] as? String).map {
                ($0, line)
            }
        }
    }

    /// An event line without the fields that belong to the bridge that read the change (`origin`, `received_at`)
    /// and to the moment it read it (`data`), as sorted JSON text: equal for two deliveries of one change.
    func changeFields(_ line: String) -> String? {
        guard var object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { return nil }
        for field in ["origin", "received_at", "data"] { object[field] = nil }
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
            .map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether every thread of process `pid` is stopped (state `T` in `/proc/<pid>/task/*/stat`).
    func isStopped(_ pid: Int32) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return !tasks.isEmpty
            && tasks.allSatisfy { task in
                let stat = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/stat", encoding: .utf8)) ?? ""
                // The state follows the ") " that closes the command name.
                guard let close = stat.lastIndex(of: ")"), stat.distance(from: close, to: stat.endIndex) > 2 else {
                    return false
                }
                return stat[stat.index(close, offsetBy: 2)] == "T"
            }
    }

    /// Makes `count` changes to articles (5 ms apart), waits until they are made and returns their event ids.
    func changes(_ emulator: Emulator, count: Int) throws -> [String] {
        let before = try emulator.newestActivityID()
        try emulator.control("generator", ["collection": "articles", "count": count, "interval_ms": 5, "kind": "mixed"])
        try emulator.waitForGenerators()
        return try emulator.activityIDs(["articles"], after: before).map { "act_\($0)" }
    }

    func readiness(_ bridge: BridgeProcess) -> (status: Int, reasons: [String])? {
        guard let url = bridge.operationsURL(), let response = try? HTTPFetch.get(url + "/readyz") else {
            return nil
        }
        return (response.status, response.json["reasons"] as? [String] ?? [])
    }

    func metric(_ bridge: BridgeProcess, _ name: String, _ labels: [String: String] = [:]) -> Double? {
        guard let url = bridge.operationsURL(), let response = try? HTTPFetch.get(url + "/metrics") else {
            return nil
        }
        return (try? ParsedMetrics(parsing: response.text))?.value(name, labels)
    }

    /// The config with one webhook sink to `receiver` (retried every 200 ms, `maxAttempts` in all) instead of the
    /// NDJSON file.
    func sharedWebhookConfig(
        _ emulator: Emulator, _ servers: [NATSServer], _ receiver: WebhookReceiver, maxAttempts: Int
    ) throws -> String {
        let yaml = config(emulator, servers).replacingOccurrences(
            of: "  - type: ndjson\n    path: \"out.ndjson\"",
            with: "  - type: webhook\n    url: \"\(receiver.hookURL())\"\n    retry_schedule: [200ms]\n"
                + "    max_attempts: \(maxAttempts)")
        try #require(yaml.contains("type: webhook"))
        return yaml
    }

    /// Starts bridge A, waits until it is active, then starts B (standby).
    func startPair(_ emulator: Emulator, _ servers: [NATSServer], lease: String = "5s") throws
        -> (BridgeProcess, BridgeProcess)
    {
        try startPair(config: config(emulator, servers, lease: lease))
    }

    /// Starts bridge A on `yaml`, waits until it is active and connected, then starts B on it (standby).
    func startPair(config yaml: String) throws -> (BridgeProcess, BridgeProcess) {
        let first = try BridgeProcess.run(config: yaml)
        try #require(first.waitForLog("became active", timeout: 30), "\(first.stderr.suffix(3000))")
        #expect(first.waitUntilConnected(timeout: 30), "\(first.stderr.suffix(3000))")
        let second = try BridgeProcess.run(config: yaml)
        try #require(second.waitForLog("waiting for the lease", timeout: 30), "\(second.stderr.suffix(3000))")
        return (first, second)
    }
}
