import BridgeTestSupport
import Foundation
import Testing

/// Several bridges on one name with `state.backend: jetstream` (README "Running several replicas"): the real binary
/// against the Directus emulator and real nats-server processes. Each bridge writes NDJSON to a file of its own
/// directory, so what each one delivered is known.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SharedStateTests {
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
    func delivered(_ bridge: BridgeProcess) -> [String] {
        let text = (try? String(contentsOf: bridge.directory.appendingPathComponent("out.ndjson"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["id"] as? String
        }
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

    /// Starts bridge A, waits until it is active, then starts B (standby).
    func startPair(_ emulator: Emulator, _ servers: [NATSServer], lease: String = "5s") throws
        -> (BridgeProcess, BridgeProcess)
    {
        let first = try BridgeProcess.run(config: config(emulator, servers, lease: lease))
        try #require(first.waitForLog("became active", timeout: 30), "\(first.stderr.suffix(3000))")
        #expect(first.waitUntilConnected(timeout: 30), "\(first.stderr.suffix(3000))")
        let second = try BridgeProcess.run(config: config(emulator, servers, lease: lease))
        try #require(second.waitForLog("waiting for the lease", timeout: 30), "\(second.stderr.suffix(3000))")
        return (first, second)
    }

    @Test func twoBridgesOnOneNameOnlyOneDelivers() throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "shared-two")
        let server = try NATSServer(name: "single", in: directory)
        try server.start()
        let emulator = try Emulator()
        defer { emulator.stop() }
        let (active, standby) = try startPair(emulator, [server])
        let before = try emulator.newestActivityID()
        try emulator.control("generator", ["collection": "articles", "count": 30, "interval_ms": 5, "kind": "mixed"])
        try emulator.waitForGenerators()
        let expected = try emulator.activityIDs(["articles"], after: before).map { "act_\($0)" }
        #expect(active.waitUntil(timeout: 20) { Set(delivered($0)).isSuperset(of: expected) }, "\(active.stderr.suffix(3000))")
        #expect(delivered(standby).isEmpty)
        #expect(!standby.stderr.contains("became active"))
        let ready = readiness(standby)
        #expect(ready?.status == 503 && ready?.reasons.first == "standby", "\(String(describing: ready))")
        #expect(readiness(active)?.status == 200)
        #expect(metric(active, "directus_bridge_role", ["role": "active"]) == 1)
        #expect(metric(standby, "directus_bridge_role", ["role": "standby"]) == 1)
        #expect(metric(standby, "directus_bridge_role", ["role": "active"]) == 0)
        #expect((metric(active, "directus_bridge_lease_age_seconds") ?? 99) < 5)

        // A graceful stop releases the lease: the standby takes over at once and goes on from the shared cursor.
        active.send(SIGTERM)
        #expect(active.waitForExit() == 0, "\(active.stderr.suffix(2000))")
        #expect(standby.waitForLog("became active", timeout: 10), "\(standby.stderr.suffix(3000))")
        let next = try emulator.newestActivityID()
        try emulator.control("generator", ["collection": "articles", "count": 10, "interval_ms": 5, "kind": "mixed"])
        try emulator.waitForGenerators()
        let later = try emulator.activityIDs(["articles"], after: next).map { "act_\($0)" }
        #expect(standby.waitUntil(timeout: 20) { Set(delivered($0)).isSuperset(of: later) }, "\(standby.stderr.suffix(3000))")
        #expect(Set(delivered(standby)).isDisjoint(with: expected), "the standby resumed from the shared cursor")
        standby.send(SIGTERM)
        #expect(standby.waitForExit() == 0)
    }
}
