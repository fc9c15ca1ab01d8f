import Foundation

/// The resident set of the `directus-bridge` binary itself at an ordinary live load: the in-process measurement of
/// `live-pipeline` runs inside the benchmark process, whose Foundation, URLSession and emulator client are not the
/// bridge's. Live mode, an NDJSON file sink; `LivePipelineBenchmark.pacedCount` events at
/// `pacedRate` per second; the resident set is read once every line is in the file. The configuration is
/// activity-backfill's (two subscriptions, `articles` and `comments`) in live mode.
enum LivePipelineBinaryMemory {
    struct Resident {
        /// VmRSS, RssAnon (heap, stacks) and RssFile (the pages of the binary and its shared libraries), MiB.
        var total: Double
        var anonymous: Double
        var fileBacked: Double
    }

    /// Nil (and why on stderr) when the `directus-bridge` product was not built next to this benchmark.
    static func measure(emulator: BenchmarkEmulator, count: Int, rate: Int) throws -> Resident? {
        let directory = try ActivityBenchmark.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out.ndjson").path
        let config = try ActivityBenchmark.writeConfig(
            url: "http://127.0.0.1:\(emulator.port)", mode: "live", output: output, in: directory)
        let child: BridgeChild
        do {
            child = try BridgeChild(config: config, directory: directory)
        } catch BenchmarkFailure.helperDidNotStart(let why) {
            FileHandleStderr.write("live-pipeline: the binary's resident set was not measured: \(why)\n")
            return nil
        }
        defer { child.stop() }
        try child.waitForLog("subscriptions.live=", timeout: .seconds(30))
        try emulator.post(
            "blast", ["collection": "articles", "count": count, "size": 300, "wait": true, "rate": rate])
        let counter = LineCounter(path: output)
        _ = try FileWatch(path: output).wait(timeout: .seconds(60)) { counter.count() >= count }
        let lines = counter.count()
        guard lines >= count else { throw BenchmarkFailure.badPeerOutput("directus-bridge wrote \(lines) of \(count)") }
        return resident(of: child.process.processIdentifier)
    }

    private static func resident(of pid: Int32) -> Resident {
        var values: [String: Double] = [:]
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            values[String(parts[0])] = (parts[1].split(separator: " ").compactMap { Double($0) }.first ?? 0) / 1024
        }
        return Resident(
            total: values["VmRSS"] ?? 0, anonymous: values["RssAnon"] ?? 0, fileBacked: values["RssFile"] ?? 0)
    }
}
