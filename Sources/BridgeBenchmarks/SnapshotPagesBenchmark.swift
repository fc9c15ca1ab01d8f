import BridgeHTTP
import BridgeSystem
import Foundation

/// A snapshot read against the Directus emulator, with the real `directus-bridge` binary (built next to this one):
/// the emulator holds ITEMS articles made by its generator; a bridge whose subscription has `snapshot: true` starts
/// with an empty state directory and reads them all, in pages of 500 in primary-key order, into its NDJSON file.
/// Items/s from its start until every item is a line (start-up included), its CPU time per 1,000 items and its peak
/// RSS. Peer, run first (its count of every item, seed included, is the count the bridge is waited for): a Python
/// reader of the same pages over one kept-alive connection (`http.client` + `json`, one line per item,
/// Tests/tools/bench/snapshot_pages_peer.py). The emulator serves both, so the rates share its ceiling; the CPU
/// columns are each reader's own.
///
///     swift build -c release --product directus-bridge --product bridge-benchmarks
///     .build/release/bridge-benchmarks snapshot-pages [ITEMS]
enum SnapshotPagesBenchmark {
    @Sendable static func run(_ arguments: [String]) async throws {
        let items = arguments.first.flatMap { Int($0) } ?? 50_000
        let emulator = try HelperProcess(
            script: "directus_emulator/server.py",
            arguments: ["--port", "0", "--log-level", "warning"]
        )
        defer { ActivityBenchmark.stopEmulator(emulator) }
        let url = "http://127.0.0.1:\(emulator.port)"
        let client = HTTPClient()
        let body = #"{"collection":"articles","count":\#(items),"interval_ms":0,"kind":"create"}"#
        _ = try await ActivityBenchmark.post(client, url + "/_emulator/generator", body: body)
        _ = try await ActivityBenchmark.post(client, url + "/_emulator/generator/wait", body: #"{"timeout_ms":600000}"#)

        let directory = try ActivityBenchmark.temporaryDirectory()
        let peerOutput = directory.appendingPathComponent("peer.ndjson").path
        let answer = try HelperProcess.runToEnd(
            script: "bench/snapshot_pages_peer.py", arguments: [url, "articles", "500", peerOutput])
        let peer = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any] ?? [:]
        // The collection holds the generated items and the emulator's seed: the peer's count is every item.
        guard let total = peer["items"] as? Int, total >= items, let peerSeconds = peer["seconds"] as? Double,
            let peerCPU = peer["cpu_seconds"] as? Double
        else { throw BenchmarkFailure.badPeerOutput("snapshot_pages_peer.py: \(answer)") }
        let output = directory.appendingPathComponent("out.ndjson").path
        let config = try ActivityBenchmark.writeConfig(
            url: url, mode: "activity", output: output,
            subscriptions: "  - collection: articles\n    snapshot: true", in: directory)
        _ = FileManager.default.createFile(atPath: output, contents: nil)  // watched from the start
        let start = ContinuousClock.now
        let bridge = try BridgeChild(config: config, directory: directory)
        try await BlockingExecutor.shared.perform {  // the count is checked below
            let counter = LineCounter(path: output)
            _ = try FileWatch(path: output).wait(timeout: .seconds(600)) { counter.count() >= total }
        }
        let seconds = ActivityBenchmark.elapsedSeconds(since: start)
        let cpuSeconds = childCPUSeconds(bridge.process.processIdentifier)
        let peakMemory = bridge.peakMemoryMiB()
        bridge.stop()
        let lines = LineCounter(path: output).count()
        guard lines >= total else { throw BenchmarkFailure.badPeerOutput("only \(lines) of \(total) lines") }

        try? FileManager.default.removeItem(at: directory)
        FileHandleStderr.write(
            "snapshot-pages: \(total) items in \(seconds) s, bridge CPU \(cpuSeconds) s, peak RSS \(peakMemory) MiB; "
                + "peer \(peerSeconds) s, CPU \(peerCPU) s\n")
        let peerName = "Python http.client + json reader of the same pages"
        BenchmarkResult(
            benchmark: "snapshot-pages", metric: "snapshot items/s into NDJSON (\(total) items, pages of 500)",
            value: Double(total) / seconds, unit: "1/s", peer: peerName, peerValue: Double(total) / peerSeconds
        ).emit()
        BenchmarkResult(
            benchmark: "snapshot-pages", metric: "reader CPU time per 1,000 snapshot items",
            value: cpuSeconds * 1_000_000 / Double(total), unit: "ms", peer: peerName,
            peerValue: peerCPU * 1_000_000 / Double(total)
        ).emit()
        BenchmarkResult(
            benchmark: "snapshot-pages", metric: "bridge peak RSS during the snapshot", value: peakMemory, unit: "MiB"
        ).emit()
    }
}
