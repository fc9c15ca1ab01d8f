import BridgeActivity
import BridgeCore
import BridgeDirectus
import BridgeEvents
import BridgeHTTP
import BridgeJSON
import BridgeSinks
import BridgeSystem
import Foundation

/// The whole webhook path per event: `WebhookSink.accept` (outbox insert, one transaction per 100 events, then the
/// committed rows handed over in memory) → delivery service (per-item scheduler; SQLite read back only for rows the
/// hand-off did not bring, all of them with `prefill`) → Standard Webhooks signing → `HTTPDeliveryEngine`
/// → a local nginx answering 204 → the outcome committed (row deleted), at 1, 8 and 64 in flight; against a
/// Python aiohttp sender POSTing the same number of bodies at the same concurrency in the same run, against the
/// ceiling of any libcurl sender: libcurl's multi interface alone in C (`http-libcurl-peer`, see `HTTPMultiBenchmark`),
/// and against the floor of this design: the same durable work in C with none of the bridge's code
/// (`webhook-outbox-floor`, Benchmarks/webhook_outbox_floor.c: SQLite write-ahead outbox, signing, libcurl, deletes).
///
///     swift run -c release bridge-benchmarks webhook-delivery [TOTAL [LEVELS [FLAGS]]]
///
/// LEVELS is a comma-separated list of in-flight limits (default `1,8,64`). FLAGS, comma-separated: `nopeer` skips
/// the Python sender (for profiling); `prefill` fills the outbox before delivery starts (the delivery side alone);
/// `runs=N` (default 3) measures each level N times, ours and the peers alternately, and reports the medians — on a
/// shared VM whose speed drifts by ±10 % from one minute to the next, one run each compares two different machines.
/// Needs nginx and the test venv (both installed by `scripts/bootstrap.sh`).
enum WebhookDeliveryBenchmark {
    @Sendable static func run(_ arguments: [String]) async throws {
        let total = arguments.first.flatMap { Int($0) } ?? 40_000
        let levels = arguments.count > 1 ? arguments[1].split(separator: ",").compactMap { Int($0) } : [1, 8, 64]
        let flags = Set(arguments.count > 2 ? arguments[2].split(separator: ",").map(String.init) : [])
        let runs = flags.compactMap { $0.hasPrefix("runs=") ? Int($0.dropFirst(5)) : nil }.first.map { max(1, $0) } ?? 3
        let nginx = try HelperProcess(script: "http_peers/nginx_peer.py", arguments: [])
        defer { nginx.stop() }
        let url = "http://127.0.0.1:\(nginx.port)/hooks/directus"
        for concurrency in levels {
            let count = concurrency == 1 ? total / 4 : total
            var rates: [Double] = []
            var cpu: [Double] = []
            var peerRates: [Double] = []
            var ceilingRates: [Double] = []
            var ceilingCPU: [Double] = []
            var floorRates: [Double] = []
            var floorCPU: [Double] = []
            for _ in 0..<runs {
                let ours = try await measure(
                    url: url,
                    concurrency: concurrency,
                    total: count,
                    prefill: flags.contains("prefill")
                )
                rates.append(ours.rate)
                cpu.append(ours.cpuMicroseconds)
                if !flags.contains("nopeer") {
                    peerRates.append(
                        try HTTPMultiBenchmark.measurePython(url: url, concurrency: concurrency, total: count)
                    )
                    let ceiling = try HTTPMultiBenchmark.measureLibcurl(
                        url: url,
                        concurrency: concurrency,
                        total: count
                    )
                    ceilingRates.append(ceiling.rate)
                    ceilingCPU.append(ceiling.cpuSeconds / Double(count) * 1e6)
                    let floor = try measureFloor(url: url, concurrency: concurrency, total: count)
                    floorRates.append(floor.rate)
                    floorCPU.append(floor.cpuSeconds / Double(count) * 1e6)
                }
            }
            let what = flags.contains("prefill") ? "outbox filled first" : "outbox insert to row deleted"
            let median = runs > 1 ? ", median of \(runs)" : ""
            let peers: [(name: String?, rate: Double?)] =
                peerRates.isEmpty
                ? [(nil, nil)]
                : [
                    ("python-aiohttp (POST only)", Self.median(peerRates)),
                    (HTTPMultiBenchmark.libcurlPeerName, Self.median(ceilingRates)),
                    (Self.floorPeerName, Self.median(floorRates)),
                ]
            for (peer, peerValue) in peers {
                BenchmarkResult(
                    benchmark: "webhook-delivery",
                    metric: "deliveries/s @\(concurrency) in flight (\(what)\(median))",
                    value: Self.median(rates),
                    unit: "1/s",
                    peer: peer,
                    peerValue: peerValue
                ).emit()
            }
            // The peers' CPU is their own processes': nginx answers every side and is in none.
            let cpuPeers: [(name: String?, cpu: [Double])] =
                ceilingCPU.isEmpty
                ? [(nil, [])] : [(HTTPMultiBenchmark.libcurlPeerName, ceilingCPU), (Self.floorPeerName, floorCPU)]
            for (peer, peerCPU) in cpuPeers {
                BenchmarkResult(
                    benchmark: "webhook-delivery",
                    metric: "process CPU per delivery @\(concurrency) in flight\(median)",
                    value: Self.median(cpu),
                    unit: "us",
                    peer: peer,
                    peerValue: peerCPU.isEmpty ? nil : Self.median(peerCPU)
                ).emit()
            }
            if runs > 1 {
                let each = rates.indices.map { index in
                    String(format: "%.0f", rates[index])
                        + (index < peerRates.count
                            ? String(format: "/%.0f/%.0f/%.0f", peerRates[index], ceilingRates[index], floorRates[index])
                            : "")
                }
                FileHandle.standardError.write(
                    Data(
                        "webhook-delivery @\(concurrency): runs (ours/aiohttp/libcurl/floor) \(each.joined(separator: " "))\n"
                            .utf8
                    )
                )
            }
        }
    }

    static let floorPeerName = "C libcurl + SQLite outbox + signing (the design's floor)"

    /// Runs `webhook-outbox-floor` (built by Benchmarks/run next to this executable) with the same load and a fresh
    /// outbox; returns its deliveries/s and its process's CPU seconds over them.
    static func measureFloor(url: String, concurrency: Int, total: Int) throws -> (rate: Double, cpuSeconds: Double) {
        let program = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("webhook-outbox-floor").path
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("bench-floor-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        return try BrokerBenchmarks.peerResult(
            output: try HelperProcess.runToEnd(
                executable: program, arguments: [url, "\(concurrency)", "\(total)", directory])
        )
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Events per second from the first insert until the outbox is empty again (with `prefill`: from the start
    /// of delivery, the outbox holding every event already), and the process's CPU time per event meanwhile.
    static func measure(url: String, concurrency: Int, total: Int, prefill: Bool) async throws
        -> (rate: Double, cpuMicroseconds: Double)
    {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("bench-webhook-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try OutboxStore.open(stateDir: directory)
        let engine = try HTTPDeliveryEngine(
            // As a webhook sink makes it.
            options: WebhookSinkType.engineOptions(
                timeout: .seconds(15),
                userAgent: "directus-bridge/bench",
                caFile: nil
            ),
            configuration: WebhookSinkType.engineConfiguration(maxInFlight: concurrency)
        )
        let service = WebhookDeliveryService(
            sinkID: "bench",
            store: store,
            engine: engine,
            builder: WebhookRequestBuilder(
                url: url,
                userAgent: "directus-bridge/bench",
                extraHeaders: [],
                timeout: .seconds(15),
                signer: try WebhookSigner(secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
            ),
            policy: RetryPolicy(schedule: [.seconds(1)], maxAttempts: 3),
            settings: WebhookDeliveryService.Settings(maxInFlight: concurrency),
            metrics: nil,
            logger: .silent
        )
        let sink = WebhookSink(
            sinkID: "bench",
            name: "webhook:bench",
            store: store,
            maxOutbox: 10_000_000,
            metrics: nil,
            logger: .silent,
            clock: service.clock,
            committed: { service.accepted($0) }
        )
        // The events are made beforehand: building event lines is the JSON hot path's job, measured elsewhere.
        let warmUp = batches(0..<min(total / 10, 1000))
        let timed = batches(1_000_000..<(1_000_000 + total))
        let stop = ShutdownSignal()
        if prefill { try await feed(sink, warmUp + timed) }
        async let running: Void = service.run(stop: stop, drainTimeout: .seconds(5))
        if !prefill {
            try await feed(sink, warmUp)
            try await waitUntilEmpty(store, emptied: service.depths.outboxEmptied)
        }
        let cpuBefore = LivePipelineBenchmark.processCPUSeconds()
        let start = ContinuousClock.now
        if !prefill { try await feed(sink, timed) }
        try await waitUntilEmpty(store, emptied: service.depths.outboxEmptied)
        let elapsed = ContinuousClock.now - start
        let cpu = LivePipelineBenchmark.processCPUSeconds() - cpuBefore
        stop.trigger()
        await running
        await engine.shutdown()
        if try store.deadLetterCount(sink: nil) > 0 { throw BenchmarkFailure.unexpectedStatus(0) }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (Double(total) / seconds, cpu / Double(total) * 1e6)
    }

    /// Accepts the batches on a thread of their own, as the sink's runner does.
    private static func feed(_ sink: WebhookSink, _ batches: [[EncodedEvent]]) async throws {
        try await DedicatedThreadExecutor(name: "bench sink").runAbandoningOnCancel {
            for batch in batches { try await sink.accept(batch) }
        }
    }

    /// Waits as a webhook sink with shared state does (`WebhookSink.makeDurable`): the delivery service rings
    /// `emptied` when it counted the outbox empty (the timeout only bounds a ring that never comes).
    private static func waitUntilEmpty(_ store: OutboxStore, emptied: Wakeup) async throws {
        while try store.depth(sink: "bench") > 0 { await emptied.wait(timeout: .seconds(1)) }
    }

    /// Batches of 100 events, the ids in `range`.
    private static func batches(_ range: Range<Int>) -> [[EncodedEvent]] {
        stride(from: range.lowerBound, to: range.upperBound, by: 100).map { first in
            (first..<min(first + 100, range.upperBound)).map(event)
        }
    }

    /// A ~300-byte event line of item `index` (every event its own item, as in the aiohttp run).
    private static func event(_ index: Int) -> EncodedEvent {
        let id = "evt_bench_\(index)"
        let body =
            #"{"id":"\#(id)","type":"directus.items.update","event":"update","collection":"articles","key":"\#(index)","data":{"id":\#(index),"title":"\#(String(repeating: "x", count: 120))"},"origin":"live","seq":null,"time":"2026-12-02T10:15:00.123Z","received_at":"2026-12-02T10:15:00.125Z","subscription":"articles"}"#
        return EncodedEvent(
            id: id,
            event: .update,
            collection: "articles",
            key: "\(index)",
            origin: .live,
            seq: nil,
            time: Timestamp(microsecondsSinceEpoch: 0),
            receivedAt: Timestamp(microsecondsSinceEpoch: 0),
            subscription: "articles",
            body: Array(body.utf8)
        )
    }
}
