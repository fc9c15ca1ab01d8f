import BridgeHTTP
import BridgeJSON
import BridgeSystem
import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Activity mode against the Directus emulator, with the real `directus-bridge` binary (built next to this one):
///
/// * **backfill** — the bridge is stopped, the emulator's generator makes CHANGES changes (mixed creates, updates
///   and deletes on `articles`), the bridge starts again: changes/s from its start until every change is a line
///   in its NDJSON file (start-up and authentication included), with its peak memory, at the default
///   `max_queue` and at 5,000. Peer: the generator's own rate of making the changes.
/// * **latency** — a live-mode bridge and an activity-mode bridge run side by side; SAMPLES creates are made one
///   at a time (20 ms apart) and each bridge's stdout line is timestamped as it arrives: p50/p99 of change made →
///   line read, activity mode (peer: live mode).
///
///     swift build -c release --product directus-bridge --product bridge-benchmarks
///     .build/release/bridge-benchmarks activity-backfill [CHANGES] [SAMPLES]
enum ActivityBenchmark {
    @Sendable static func run(_ arguments: [String]) async throws {
        let changes = arguments.first.flatMap { Int($0) } ?? 100_000
        let samples = arguments.dropFirst().first.flatMap { Int($0) } ?? 300
        for maxQueue in [100_000, 5_000] { try await backfill(changes: changes, maxQueue: maxQueue) }
        try await latency(samples: samples)
    }

    // MARK: - Backfill

    static func backfill(changes: Int, maxQueue: Int) async throws {
        let emulator = try HelperProcess(
            script: "directus_emulator/server.py",
            arguments: ["--port", "0", "--log-level", "warning"]
        )
        defer { stopEmulator(emulator) }
        let url = "http://127.0.0.1:\(emulator.port)"
        let directory = try temporaryDirectory()
        let output = directory.appendingPathComponent("out.ndjson").path
        let config = try writeConfig(url: url, mode: "activity", output: output, maxQueue: maxQueue, in: directory)

        let first = try BridgeChild(config: config, directory: directory)
        try first.waitForLog("subscriptions.live=", timeout: .seconds(20))
        first.stop()

        let client = HTTPClient()
        let generatorSeconds = try await generate(changes: changes, url: url, client: client)
        FileHandleStderr.write("activity-backfill: \(changes) changes made in \(generatorSeconds) s\n")

        let start = ContinuousClock.now
        let second = try BridgeChild(config: config, directory: directory)
        try await BlockingExecutor.shared.perform {  // the count is checked below
            let counter = LineCounter(path: output)
            _ = try FileWatch(path: output).wait(timeout: .seconds(600)) { counter.count() >= changes }
        }
        let seconds = elapsedSeconds(since: start)
        let peakMemory = second.peakMemoryMiB()
        second.stop()
        let lines = LineCounter(path: output).count()
        guard lines >= changes else { throw BenchmarkFailure.badPeerOutput("only \(lines) of \(changes) lines") }
        FileHandleStderr.write("activity-backfill: \(lines) lines in \(seconds) s, peak RSS \(peakMemory) MiB\n")
        BenchmarkResult(
            benchmark: "activity-backfill",
            metric: "changes/s recovered after a \(changes)-change outage (max_queue \(maxQueue))",
            value: Double(changes) / seconds,
            unit: "1/s",
            peer: "emulator generator (changes made/s)",
            peerValue: Double(changes) / generatorSeconds
        ).emit()
        BenchmarkResult(
            benchmark: "activity-backfill",
            metric: "bridge peak RSS during the backfill (max_queue \(maxQueue))",
            value: peakMemory,
            unit: "MiB"
        ).emit()
    }

    private static func generate(changes: Int, url: String, client: HTTPClient) async throws -> Double {
        let start = ContinuousClock.now
        let body = #"{"collection":"articles","count":\#(changes),"interval_ms":0,"kind":"mixed"}"#
        _ = try await post(client, url + "/_emulator/generator", body: body)
        _ = try await post(client, url + "/_emulator/generator/wait", body: #"{"timeout_ms":600000}"#)
        return elapsedSeconds(since: start)
    }

    // MARK: - Latency

    static func latency(samples: Int) async throws {
        let emulator = try HelperProcess(
            script: "directus_emulator/server.py",
            arguments: ["--port", "0", "--log-level", "warning"]
        )
        defer { stopEmulator(emulator) }
        let url = "http://127.0.0.1:\(emulator.port)"
        var bridges: [(mode: String, child: BridgeChild, lines: LineTimes)] = []
        for mode in ["live", "activity"] {
            let directory = try temporaryDirectory()
            let config = try writeConfig(url: url, mode: mode, output: "-", in: directory)
            let lines = LineTimes()
            let child = try BridgeChild(config: config, directory: directory, stdout: lines)
            try child.waitForLog("subscriptions.live=", timeout: .seconds(20))
            bridges.append((mode, child, lines))
        }
        defer { for bridge in bridges { bridge.child.stop() } }

        let client = HTTPClient()
        var made: [String: ContinuousClock.Instant] = [:]
        for n in 0..<samples {
            let start = ContinuousClock.now
            let answer = try await post(client, url + "/items/articles", body: #"{"title":"latency \#(n)"}"#)
            guard let key = answer["data"]?["id"]?.keyString else { throw BenchmarkFailure.badPeerOutput("no id") }
            made[key] = start
            try await Task.sleep(for: .milliseconds(20))  // the pace of the samples, not a wait for anything
        }
        let deadline = ContinuousClock.now + .seconds(30)
        let lineTimes = bridges.map(\.lines)
        try await BlockingExecutor.shared.perform {  // checked below
            for lines in lineTimes { _ = lines.wait(forCount: samples, deadline: deadline) }
        }
        var results: [String: (p50: Double, p99: Double)] = [:]
        for bridge in bridges {
            let arrivals = bridge.lines.snapshot()
            let latencies = made.compactMap { key, start in arrivals[key].map { milliseconds($0 - start) } }.sorted()
            guard latencies.count == samples else {
                throw BenchmarkFailure.badPeerOutput("\(bridge.mode): \(latencies.count) of \(samples) lines")
            }
            results[bridge.mode] = (percentile(latencies, 0.5), percentile(latencies, 0.99))
        }
        let activity = results["activity"]!
        let live = results["live"]!
        BenchmarkResult(
            benchmark: "activity-backfill",
            metric: "latency p50 change → line, activity mode",
            value: activity.p50,
            unit: "ms",
            peer: "live mode",
            peerValue: live.p50
        ).emit()
        BenchmarkResult(
            benchmark: "activity-backfill",
            metric: "latency p99 change → line, activity mode",
            value: activity.p99,
            unit: "ms",
            peer: "live mode",
            peerValue: live.p99
        ).emit()
    }

    // MARK: - Helpers

    /// The emulator inherits this process's blocked signal mask (SIGTERM blocked on Swift's threads), so it is
    /// killed outright; it keeps nothing on disk.
    static func stopEmulator(_ emulator: HelperProcess) {
        guard emulator.process.isRunning else { return }
        kill(emulator.process.processIdentifier, SIGKILL)
        emulator.process.waitUntilExit()
    }

    /// `bridge.yaml` in `directory`: `subscriptions` are YAML list entries, each line indented as in the file.
    static func writeConfig(
        url: String,
        mode: String,
        output: String,
        maxQueue: Int = 100_000,
        subscriptions: String = "  - collection: articles\n  - collection: comments",
        in directory: URL
    ) throws -> String {
        let yaml = """
            directus:
              url: \(url)
              auth:
                token: admin-static-token
            subscriptions:
            \(subscriptions)
            delivery:
              mode: \(mode)
              poll_interval: 5s
              state_dir: ./state
              max_queue: \(maxQueue)
            sinks:
              - type: ndjson
                path: "\(output)"
            log:
              level: info
            """
        let path = directory.appendingPathComponent("bridge.yaml").path
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func post(_ client: HTTPClient, _ url: String, body: String) async throws -> JSONValue {
        let response = try await client.send(
            HTTPRequest(
                method: "POST",
                url: url,
                headers: [("content-type", "application/json"), ("authorization", "Bearer admin-static-token")],
                body: Array(body.utf8),
                timeout: .seconds(600)
            )
        )
        guard (200..<300).contains(response.status) else { throw BenchmarkFailure.unexpectedStatus(response.status) }
        return try JSONValue.parse(response.body)
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bridge-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func elapsedSeconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    private static func percentile(_ sorted: [Double], _ quantile: Double) -> Double {
        sorted[min(sorted.count - 1, Int((Double(sorted.count) * quantile).rounded(.up)) - 1)]
    }
}
