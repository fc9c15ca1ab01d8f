import BridgeActivity
import BridgeCore
import BridgeDirectus
import BridgeEvents
import BridgeJSON
import BridgeSinks
import BridgeSystem
import BridgeWebSocket
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Issue 3's throughput benchmark: the emulator's blast feeder pushes N create events (≈300-byte items) over one
/// subscription; the bridge's live path (socket reader thread → queue → dispatcher thread → NDJSON sink to
/// /dev/null) turns them into event lines. Reports items/s, the p50/p99 latency from frame received to line
/// written, the CPU per item and the peak RSS, and the same job done by a small Python `websockets` + `json`
/// consumer in the same run. A paced run before it (`pacedCount` events at `pacedRate` per second) gives the p99
/// added latency and the steady RSS at an ordinary load; the same paced load through the `directus-bridge` binary
/// (when built next to this one) gives the bridge process's own resident set.
///
///   bridge-benchmarks live-pipeline [COUNT] [nopeer] [loopfeeder]
/// (default 200000; nopeer: ours only, for profiling). The full-speed runs, ours and the peer's, are fed by the
/// emulator's `direct` blast (the frames replayed from a thread with blocking sends), which keeps ahead of the bridge
/// on a loaded machine; `loopfeeder` feeds them through the emulator's event loop instead, as before 2026-12-05 (the
/// only feeder a base binary of then has: use it for A/B against one). BENCHMARKS.md, "the live path per event, a
/// feeder that keeps up", says what each measures.
/// Pin it for "one core": `taskset -c 0 bridge-benchmarks live-pipeline` (Benchmarks/run does, and the emulator
/// pins itself to the other core).
enum LivePipelineBenchmark {
    static let pacedRate = 10_000
    static let pacedCount = 30_000

    @Sendable static func run(_ arguments: [String]) async throws {
        let count = arguments.first.flatMap(Int.init) ?? 200_000
        let withPeer = !arguments.contains("nopeer")
        let direct = !arguments.contains("loopfeeder")
        let emulator = try BenchmarkEmulator.start()
        defer { emulator.stop() }

        // The paced run first: after the full-speed run the allocator keeps pages that the burst's queue used, and
        // the resident set would describe that burst rather than a steady load.
        let paced = try await measureBridge(emulator: emulator, count: pacedCount, rate: pacedRate)
        try emulator.post("reset", [:])
        let ours = try await measureBridge(emulator: emulator, count: count, direct: direct)
        let name = "live-pipeline"
        BenchmarkResult(benchmark: name, metric: "bridge CPU per item", value: ours.cpuPerItem * 1e9, unit: "ns")
            .emit()
        try emulator.post("reset", [:])
        if let binary = try LivePipelineBinaryMemory.measure(emulator: emulator, count: pacedCount, rate: pacedRate) {
            let rate = "at \(pacedRate) events/s"
            BenchmarkResult(
                benchmark: name,
                metric: "directus-bridge steady RSS \(rate)",
                value: binary.total,
                unit: "MiB"
            ).emit()
            BenchmarkResult(
                benchmark: name,
                metric: "directus-bridge RSS \(rate): anonymous (heap, stacks)",
                value: binary.anonymous,
                unit: "MiB"
            ).emit()
            BenchmarkResult(
                benchmark: name,
                metric: "directus-bridge RSS \(rate): file-backed (binary, shared libraries)",
                value: binary.fileBacked,
                unit: "MiB"
            ).emit()
        }
        if withPeer {
            try emulator.post("reset", [:])
            let peer = try measurePython(emulator: emulator, count: count, direct: direct)
            let peerName = "python websockets+json consumer"
            BenchmarkResult(
                benchmark: name,
                metric: "items/s",
                value: ours.rate,
                unit: "1/s",
                peer: peerName,
                peerValue: peer.rate
            ).emit()
            BenchmarkResult(
                benchmark: name,
                metric: "p50 latency",
                value: ours.p50 * 1000,
                unit: "ms",
                peer: peerName,
                peerValue: peer.p50 * 1000
            ).emit()
            BenchmarkResult(
                benchmark: name,
                metric: "p99 latency",
                value: ours.p99 * 1000,
                unit: "ms",
                peer: peerName,
                peerValue: peer.p99 * 1000
            ).emit()
            BenchmarkResult(
                benchmark: name,
                metric: "peak RSS",
                value: ours.peakRSSMiB,
                unit: "MiB",
                peer: peerName,
                peerValue: peer.peakRSSMiB
            ).emit()
        } else {
            BenchmarkResult(benchmark: name, metric: "items/s", value: ours.rate, unit: "1/s").emit()
            BenchmarkResult(benchmark: name, metric: "p99 latency", value: ours.p99 * 1000, unit: "ms").emit()
            BenchmarkResult(benchmark: name, metric: "peak RSS", value: ours.peakRSSMiB, unit: "MiB").emit()
        }
        BenchmarkResult(
            benchmark: name,
            metric: "p99 added latency at \(pacedRate) events/s",
            value: paced.p99 * 1000,
            unit: "ms"
        ).emit()
        BenchmarkResult(
            benchmark: name,
            metric: "steady RSS at \(pacedRate) events/s",
            value: paced.rssMiB,
            unit: "MiB"
        ).emit()
        BenchmarkResult(
            benchmark: name,
            metric: "RSS of this process before the live path was built",
            value: paced.rssBeforeMiB,
            unit: "MiB"
        ).emit()
    }

    struct Measurement {
        var rate: Double
        var p50: Double
        var p99: Double
        var cpuPerItem: Double = 0
        var peakRSSMiB: Double = 0
        /// The resident set once every event was written (VmRSS).
        var rssMiB: Double = 0
        /// The resident set before the live path was built (this benchmark process: runtime, Foundation, emulator
        /// client), so that `rssMiB - rssBeforeMiB` is what the live path itself holds.
        var rssBeforeMiB: Double = 0
    }

    /// Our live path on `count` events, sent as fast as the emulator can (`rate` 0; from its sending thread when
    /// `direct`) or `rate` per second.
    static func measureBridge(
        emulator: BenchmarkEmulator,
        count: Int,
        rate: Int = 0,
        direct: Bool = false
    ) async throws -> Measurement {
        let rssBefore = residentMiB()
        let registry = MetricsRegistry()
        let metrics = PipelineMetrics(registry: registry)
        let health = HealthState(expectedSubscriptions: ["articles"])
        let sink = LatencyRecordingSink(inner: try NDJSONSink(path: "/dev/null", fsync: .never), expected: count)
        let inbox = SinkInbox(
            sinkID: "bench",
            capacity: 100_000,
            maxBytes: 256 << 20,
            registry: registry,
            pipelineMetrics: metrics,
            logger: .silent
        )
        let sinks = SinkFanOut([inbox])
        let runner = SinkRunner(
            sink: ConfiguredSink(id: "bench", connector: sink, filter: EventFilter()),
            inbox: inbox,
            recorder: nil,
            metrics: metrics,
            health: health,
            logger: .silent
        )
        let tokenBox = TokenBox()
        tokenBox.publish("admin-static-token")
        let stop = ShutdownSignal()
        let connection = try await WebSocketConnection.connect(
            to: try WebSocketURL("ws://127.0.0.1:\(emulator.port)/websocket"),
            options: WebSocketOptions(),
            logger: .silent
        )
        let route = SubscriptionRoute(
            uid: "articles",
            collection: "articles",
            primaryKey: "id",
            events: [.create, .update, .delete],
            handling: .emit,
            subscribeMessage: #"{"type":"subscribe","collection":"articles","uid":"articles"}"#
        )
        let cpuBefore = processCPUSeconds()
        async let reading: RealtimeConnectionDriver.End = BlockingExecutor.shared.perform {
            RealtimeConnectionDriver(
                connection: connection,
                routes: [route],
                authMode: .handshake,
                heartbeat: .seconds(30),
                sinks: sinks,
                tokenBox: tokenBox,
                stop: stop,
                trigger: nil,
                health: health,
                metrics: metrics,
                logger: .silent
            ).run()
        }
        async let dispatching: Void = runner.runOnOwnThread()
        // The driver's connection rings `changed` (the timeout only bounds a wait for a connection never made).
        while !health.snapshot.connected { await health.changed.wait(timeout: .seconds(1)) }
        try emulator.post(
            "blast",
            ["collection": "articles", "count": count, "size": 300, "wait": false, "rate": rate, "direct": direct]
        )
        await sink.waitUntilDone()
        let cpu = processCPUSeconds() - cpuBefore
        let rss = residentMiB()
        stop.trigger()
        _ = try await reading
        sinks.close()
        try await dispatching
        var result = sink.measurement()
        result.cpuPerItem = cpu / Double(count)
        result.peakRSSMiB = peakRSSMiB()
        result.rssMiB = rss
        result.rssBeforeMiB = rssBefore
        return result
    }

    static func measurePython(emulator: BenchmarkEmulator, count: Int, direct: Bool) throws -> Measurement {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BenchmarkEmulator.python)
        process.arguments = [
            "-u", BenchmarkEmulator.tool("bench/live_consumer.py"), "ws://127.0.0.1:\(emulator.port)/websocket",
            "admin-static-token", "articles", "\(count)",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let handle = output.fileHandleForReading
        var text = ""
        while !text.contains("READY\n") {
            let data = handle.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        try emulator.post(
            "blast",
            ["collection": "articles", "count": count, "size": 300, "wait": false, "direct": direct]
        )
        let rest = handle.readDataToEndOfFile()
        process.waitUntilExit()
        let resultLine = String(decoding: rest, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? "{}"
        let json = try JSONSerialization.jsonObject(with: Data(resultLine.utf8)) as? [String: Any] ?? [:]
        return Measurement(
            rate: json["items_per_second"] as? Double ?? 0,
            p50: (json["p50_ms"] as? Double ?? 0) / 1000,
            p99: (json["p99_ms"] as? Double ?? 0) / 1000,
            peakRSSMiB: json["peak_rss_mib"] as? Double ?? 0
        )
    }

    /// The process's peak resident set size so far (includes the benchmark's own latency array, ~1.6 MB).
    static func peakRSSMiB() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }

    /// The process's resident set size now (VmRSS of /proc/self/status).
    static func residentMiB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return (line.split(separator: " ").compactMap { Double($0) }.first ?? 0) / 1024
        }
        return 0
    }

    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}

/// Wraps a sink and records, per event, the time from frame receipt (`receivedAt`) to the line being written.
final class LatencyRecordingSink: SinkConnector, @unchecked Sendable {
    // @unchecked: written by the dispatcher thread only; read after `waitUntilDone` returned.
    let inner: NDJSONSink
    let expected: Int
    private var latencies: [Double] = []
    private var first: Double?
    private var last: Double = 0
    private let done = DispatchSemaphore(value: 0)

    init(inner: NDJSONSink, expected: Int) {
        self.inner = inner
        self.expected = expected
        latencies.reserveCapacity(expected)
    }

    var name: String { inner.name }

    func accept(_ events: [EncodedEvent]) async throws(SinkError) {
        try await inner.accept(events)
        let now = Timestamp.now().microsecondsSinceEpoch
        for event in events {
            let received = Double(event.receivedAt.microsecondsSinceEpoch) / 1e6
            first = min(first ?? received, received)
            latencies.append(Double(now - event.receivedAt.microsecondsSinceEpoch) / 1e6)
        }
        last = Double(now) / 1e6
        if latencies.count >= expected && latencies.count - events.count < expected { done.signal() }
    }

    func tick(now: ContinuousClock.Instant) async throws(SinkError) { try await inner.tick(now: now) }
    func makeDurable() async throws(SinkError) { try await inner.makeDurable() }
    func reopen() async throws(SinkError) { try await inner.reopen() }
    func close() async throws(SinkError) { try await inner.close() }

    func waitUntilDone() async {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                self.done.wait()
                continuation.resume()
            }
        }
    }

    func measurement() -> LivePipelineBenchmark.Measurement {
        let sorted = latencies.sorted()
        let elapsed = max(last - (first ?? last), 1e-9)
        return .init(
            rate: Double(latencies.count) / elapsed,
            p50: sorted[sorted.count / 2],
            p99: sorted[Int(Double(sorted.count) * 0.99)]
        )
    }
}

/// The Directus emulator started by a benchmark (pinned to the last CPU when `taskset` exists, so the measured
/// process can have the first one).
final class BenchmarkEmulator: @unchecked Sendable {
    // @unchecked: immutable after init.
    let process: Process
    let port: Int
    /// Signalled when the process exits (its termination handler).
    private let exited: DispatchSemaphore

    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }
    static var python: String {
        ProcessInfo.processInfo.environment["BRIDGE_PYTHON"] ?? root.appendingPathComponent(".venv/bin/python").path
    }
    static func tool(_ path: String) -> String { root.appendingPathComponent("Tests/tools/\(path)").path }

    private init(process: Process, port: Int, exited: DispatchSemaphore) {
        self.process = process
        self.port = port
        self.exited = exited
    }

    static func start(arguments: [String] = []) throws -> BenchmarkEmulator {
        let process = Process()
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let command =
            [python, "-u", tool("directus_emulator/server.py"), "--port", "0", "--log-level", "warning"]
            + arguments
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset"), cores > 1 {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
            process.arguments = ["-c", "\(cores - 1)"] + command
        } else {
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments = Array(command.dropFirst())
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard text.hasPrefix("READY "), let port = Int(text.dropFirst(6).prefix { $0.isNumber }) else {
            process.terminate()
            throw BenchmarkError(message: "the emulator did not start: \(text)")
        }
        return BenchmarkEmulator(process: process, port: port, exited: exited)
    }

    func stop() {
        process.terminate()
        if exited.wait(timeout: .now() + 3) == .timedOut { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// `POST /_emulator/<path>` with a JSON body (blocking; benchmarks are not async-sensitive here).
    @discardableResult
    func post(_ path: String, _ body: [String: Any]) throws -> [String: Any] {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/_emulator/\(path)")!)
        request.httpMethod = "POST"
        request.timeoutInterval = 600
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let semaphore = DispatchSemaphore(value: 0)
        let box = ResultBox()
        URLSession.shared.dataTask(with: request) { data, _, error in
            box.data = data
            box.error = error
            semaphore.signal()
        }.resume()
        semaphore.wait()
        if let error = box.error { throw error }
        return (try? JSONSerialization.jsonObject(with: box.data ?? Data())) as? [String: Any] ?? [:]
    }
}

private final class ResultBox: @unchecked Sendable {
    var data: Data?
    var error: (any Error)?
}

struct BenchmarkError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
