import BridgeHTTP
import Foundation

/// Webhook-style deliveries per second through `HTTPDeliveryEngine` to a local nginx answering 204, at 1, 8
/// and 64 requests in flight, against a Python aiohttp sender doing the same job in the same run, and against the
/// ceiling: libcurl's multi interface alone in C (`Benchmarks/http_libcurl_peer.c`, built by Benchmarks/run next
/// to this executable as `http-libcurl-peer`).
///
///     swift run -c release bridge-benchmarks http-multi [TOTAL]
///
/// Needs nginx and the test venv (both installed by `scripts/bootstrap.sh`).
enum HTTPMultiBenchmark {
    static let concurrencies = [1, 8, 64]

    @Sendable static func run(_ arguments: [String]) async throws {
        let total = arguments.first.flatMap { Int($0) } ?? 40_000
        let nginx = try HelperProcess(script: "http_peers/nginx_peer.py", arguments: [])
        defer { nginx.stop() }
        let url = "http://127.0.0.1:\(nginx.port)/hooks/directus"
        let body = Array(("{\"event\":\"update\",\"data\":\"" + String(repeating: "x", count: 272) + "\"}").utf8)

        for concurrency in concurrencies {
            let count = concurrency == 1 ? total / 4 : total
            let engine = try await measureEngine(url: url, body: body, concurrency: concurrency, total: count)
            let pythonRate = try measurePython(url: url, concurrency: concurrency, total: count)
            let ceiling = try measureLibcurl(url: url, concurrency: concurrency, total: count)
            for (peer, rate) in [("python-aiohttp", pythonRate), (libcurlPeerName, ceiling.rate)] {
                BenchmarkResult(
                    benchmark: "http-multi", metric: "deliveries/s @\(concurrency) in flight", value: engine.rate,
                    unit: "1/s", peer: peer, peerValue: rate
                ).emit()
            }
            // Each side's own process (nginx answers both and is in neither).
            BenchmarkResult(
                benchmark: "http-multi", metric: "process CPU per delivery @\(concurrency) in flight",
                value: engine.cpuSeconds / Double(count) * 1e6, unit: "us",
                peer: libcurlPeerName, peerValue: ceiling.cpuSeconds / Double(count) * 1e6
            ).emit()
            if concurrency == 1 {
                // The REST client (one blocking transfer per call on the blocking pool), for comparison.
                let restRate = try await measureREST(url: url, body: body, total: count)
                BenchmarkResult(
                    benchmark: "http-multi", metric: "REST client requests/s @1 in flight", value: restRate,
                    unit: "1/s", peer: "python-aiohttp", peerValue: pythonRate
                ).emit()
            }
        }
    }

    /// Sequential requests through `HTTPClient`.
    static func measureREST(url: String, body: [UInt8], total: Int) async throws -> Double {
        let client = HTTPClient()
        let request = HTTPRequest(method: "POST", url: url, headers: [("content-type", "application/json")], body: body)
        for _ in 0..<min(total / 10, 1000) { _ = try await client.send(request) }
        let start = ContinuousClock.now
        for _ in 0..<total {
            let response = try await client.send(request)
            guard response.status == 204 else { throw BenchmarkFailure.unexpectedStatus(response.status) }
        }
        let elapsed = ContinuousClock.now - start
        return Double(total) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// Keeps `concurrency` requests in flight on one engine until `total` have been answered; returns the rate and
    /// the process's CPU seconds over the timed part.
    static func measureEngine(url: String, body: [UInt8], concurrency: Int, total: Int) async throws
        -> (rate: Double, cpuSeconds: Double)
    {
        let engine = try HTTPDeliveryEngine(configuration: .init(maxInFlight: concurrency))
        let request = HTTPRequest(method: "POST", url: url,
            headers: [("content-type", "application/json"), ("webhook-id", "evt_bench")], body: body)
        try await drive(engine, request, concurrency: concurrency, total: min(total / 10, 1000))  // warm-up
        let cpuBefore = LivePipelineBenchmark.processCPUSeconds()
        let start = ContinuousClock.now
        try await drive(engine, request, concurrency: concurrency, total: total)
        let elapsed = ContinuousClock.now - start
        let cpu = LivePipelineBenchmark.processCPUSeconds() - cpuBefore
        await engine.shutdown()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (Double(total) / seconds, cpu)
    }

    /// Keeps `concurrency` requests submitted through the engine's batch interface, as the webhook delivery
    /// service does: each batch of completions is replaced by as many new requests, until `total` were answered.
    private static func drive(
        _ engine: HTTPDeliveryEngine,
        _ request: HTTPRequest,
        concurrency: Int,
        total: Int
    ) async throws {
        let (answered, continuation) = AsyncStream<[DeliveryReceiver.Completion]>.makeStream()
        let receiver = DeliveryReceiver { completions in continuation.yield(completions) }
        var submitted = min(concurrency, total)
        engine.submit(Array(repeating: (tag: 0, request: request), count: submitted), to: receiver)
        var done = 0
        for await completions in answered {
            for completion in completions {
                let status = try completion.result.get().status
                guard status == 204 else { throw BenchmarkFailure.unexpectedStatus(status) }
            }
            done += completions.count
            if done == total { break }
            let more = min(completions.count, total - submitted)
            if more > 0 {
                engine.submit(Array(repeating: (tag: 0, request: request), count: more), to: receiver)
                submitted += more
            }
        }
        continuation.finish()
    }

    static let libcurlPeerName = "C libcurl multi (POST only, ceiling)"

    /// Runs `http-libcurl-peer` with the same load; returns its requests/s and its process's CPU seconds over them.
    static func measureLibcurl(url: String, concurrency: Int, total: Int) throws -> (rate: Double, cpuSeconds: Double) {
        let program = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("http-libcurl-peer").path
        return try BrokerBenchmarks.peerResult(
            output: try HelperProcess.runToEnd(executable: program, arguments: [url, "\(concurrency)", "\(total)"])
        )
    }

    /// Runs Tests/tools/http_peers/bench_sender.py with the same load; returns its requests/s.
    static func measurePython(url: String, concurrency: Int, total: Int) throws -> Double {
        let output = try HelperProcess.runToEnd(script: "http_peers/bench_sender.py",
            arguments: [url, "--concurrency", "\(concurrency)", "--total", "\(total)", "--body-size", "300"])
        guard let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
            let rate = object["requests_per_second"] as? Double, (object["failures"] as? Int) == 0
        else { throw BenchmarkFailure.badPeerOutput(output) }
        return rate
    }
}

enum BenchmarkFailure: Error {
    case unexpectedStatus(Int)
    case badPeerOutput(String)
    case helperDidNotStart(String)
}

/// A Python helper under Tests/tools, run with the test venv (`$BRIDGE_PYTHON` or `.venv/bin/python`).
final class HelperProcess {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var python: String {
        if let path = ProcessInfo.processInfo.environment["BRIDGE_PYTHON"], !path.isEmpty { return path }
        return repositoryRoot.appendingPathComponent(".venv/bin/python").path
    }

    static func scriptPath(_ script: String) -> String {
        repositoryRoot.appendingPathComponent("Tests/tools").appendingPathComponent(script).path
    }

    let process = Process()
    let port: Int

    /// Starts a server script and waits for its `READY <port>` line.
    init(script: String, arguments: [String]) throws {
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = ["-u", Self.scriptPath(script)] + arguments
        process.standardOutput = stdout
        try process.run()
        var line = Data()
        while true {
            let byte = stdout.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data([0x0A]) { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("READY "), let port = Int(text.dropFirst(6)) else {
            process.terminate()
            throw BenchmarkFailure.helperDidNotStart("\(script): \(text)")
        }
        self.port = port
    }

    /// Stops the server and waits for it.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// Runs a script to completion and returns its stdout.
    static func runToEnd(script: String, arguments: [String]) throws -> String {
        try runToEnd(executable: python, arguments: [scriptPath(script)] + arguments)
    }

    /// Runs a program to completion and returns its stdout.
    static func runToEnd(executable: String, arguments: [String]) throws -> String {
        let process = Process()
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = stdout
        try process.run()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
