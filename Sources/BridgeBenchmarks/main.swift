// bridge-benchmarks: speed and memory measurements, each against a named peer measured in the same run.
//
//   swift run -c release bridge-benchmarks [NAME ...]     (Benchmarks/run runs them all; BENCHMARKS.md records runs)
//
// Each benchmark prints one JSON object per line on stdout:
//   {"benchmark":"<name>","metric":"<what>","value":<number>,"unit":"<unit>","peer":"<peer name>","peer_value":<n>}
// so Benchmarks/run can turn the run into the tables of BENCHMARKS.md.
import BridgeSystem

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A named benchmark: `run` receives the remaining command-line arguments.
struct Benchmark {
    let name: String
    let summary: String
    let run: @Sendable ([String]) async throws -> Void
}

/// Every benchmark, in the order `all` runs them. Each area adds its entries here.
let benchmarks: [Benchmark] = [
    Benchmark(name: "timestamp", summary: "RFC 3339 formatting of event times", run: TimestampBenchmark.run),
    Benchmark(name: "json-hot-path", summary: "Directus frame → NDJSON event lines", run: JSONHotPathBenchmark.run),
    Benchmark(name: "ws-codec", summary: "WebSocket receive pipeline over in-memory 300-byte text frames",
        run: WebSocketCodecBenchmark.run),
    Benchmark(name: "ws-loopback", summary: "WebSocket client reading 300-byte text frames over loopback TCP",
        run: WebSocketLoopbackBenchmark.run),
    Benchmark(name: "live-pipeline", summary: "Directus socket → NDJSON lines through the live path vs Python",
        run: LivePipelineBenchmark.run),
    Benchmark(name: "http-multi", summary: "webhook deliveries/s to local nginx (1/8/64 in flight) vs aiohttp", run: HTTPMultiBenchmark.run),
    Benchmark(name: "activity-backfill", summary: "activity mode: backfill changes/s after an outage; added latency vs live",
        run: ActivityBenchmark.run),
    Benchmark(name: "snapshot-pages", summary: "snapshot items/s and CPU per item from REST pages vs Python json",
        run: SnapshotPagesBenchmark.run),
    Benchmark(name: "webhook-delivery", summary: "outbox → signed POST → row deleted, deliveries/s (1/8/64) vs aiohttp",
        run: WebhookDeliveryBenchmark.run),
    Benchmark(name: "kafka-sink",
        summary: "events/s through a kafka sink into librdkafka's mock cluster vs confluent-kafka",
        run: BrokerBenchmarks.runKafka),
    Benchmark(name: "jetstream-sink", summary: "events/s through a jetstream sink to a local nats-server vs nats-py",
        run: BrokerBenchmarks.runJetStream),
    Benchmark(name: "redis-sink",
        summary: "appends/s through a redis sink to a local redis-server vs libhiredis and redis-py",
        run: BrokerBenchmarks.runRedis),
    Benchmark(name: "mqtt-sink", summary: "events/s through an mqtt sink (QoS 1) to a local mosquitto vs paho-mqtt",
        run: BrokerBenchmarks.runMQTT),
    Benchmark(name: "amqp-sink",
        summary: "events/s through an amqp sink (confirms) to a local rabbitmq-server vs librabbitmq and pika",
        run: BrokerBenchmarks.runAMQP),
]

// The allocator as the bridge sets it first thing in every command: the sinks measured in this process run as they
// do in directus-bridge (BENCHMARKS.md, "Kafka: the stream against the ceiling").
LargeAllocations.returnToSystemWhenFreed()
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--list" || arguments.first == "--help" {
    for benchmark in benchmarks { print("\(benchmark.name)\t\(benchmark.summary)") }
    exit(0)
}
let selected = arguments.isEmpty || arguments.first == "all" ? benchmarks.map(\.name) : [arguments[0]]
let rest = arguments.isEmpty ? [] : Array(arguments.dropFirst())
for name in selected {
    guard let benchmark = benchmarks.first(where: { $0.name == name }) else {
        FileHandleStderr.write("unknown benchmark \(name); --list shows them\n")
        exit(64)
    }
    try await benchmark.run(rest)
}
