import BridgeEvents
import BridgeKafka
import BridgeSinks
import BridgeSystem
import Foundation

extension BrokerBenchmarks {
    /// `kafka-sink`: ours and confluent-kafka into librdkafka's mock cluster in this process (see `BrokerBenchmarks`),
    /// and in the same run the ceiling: `Benchmarks/kafka_ceiling.c` (built by Benchmarks/run next to this executable
    /// as `kafka-ceiling`), the same librdkafka producing the same messages with the same settings into a mock cluster
    /// of the same shape in its own process, doing nothing but produce and count delivery reports (in the stream,
    /// bounded by the sink's `max_outstanding`). Its CPU per event, like ours, includes its mock brokers'. Beside it
    /// the same program with `outcomes`: each message's outcome recorded in its batch's slot and settled in order per
    /// batch of 500, as the sink must for dead letters and redelivery (the headline stays the plain ceiling).
    static func runKafka(_ arguments: [String]) async throws {
        defer { removeStateDirectory() }
        let (count, runs, withPeer) = options(arguments, defaultCount: 200_000)
        let cluster = try KafkaMockCluster.make(brokers: 3)
        try cluster.createTopic("bench-ours", partitions: 6, replicationFactor: 3)
        try cluster.createTopic("bench-peer", partitions: 6, replicationFactor: 3)
        // `property=NAME=VALUE`: a librdkafka property given to both producers alike.
        let properties = arguments.compactMap { argument -> (String, String)? in
            guard argument.hasPrefix("property="), let equals = argument.dropFirst(9).firstIndex(of: "=") else {
                return nil
            }
            return (
                String(argument[argument.index(argument.startIndex, offsetBy: 9)..<equals]),
                String(argument[argument.index(after: equals)...])
            )
        }
        var config = KafkaSinkConfig(
            brokers: [cluster.bootstrapServers],
            topic: "bench-ours",
            properties: Dictionary(properties, uniquingKeysWith: { $1 })
        )
        if let outstanding = value(of: "outstanding", in: arguments).flatMap(Int.init) {
            config.maxOutstanding = outstanding
        }
        if !properties.isEmpty {
            FileHandle.standardError.write(
                Data(
                    "kafka-sink: both producers with \(properties.map { "\($0)=\($1)" }.joined(separator: " "))\n".utf8
                )
            )
        }
        let events = makeEvents(count: count, prefix: "evt")
        let ceilingProgram = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("kafka-ceiling").path
        let outstanding = config.maxOutstanding
        for drive in drives(arguments) {
            var ours: [Double] = []
            var peers: [Double] = []
            var ceilings: [Double] = []
            var outcomeCeilings: [Double] = []
            var cpu: [String] = []
            for run in 0..<runs {
                let sink = try KafkaSinkType.makeConnector(config, context: benchContext())
                let measured = try await measure(sink, events: events, drive: drive)
                ours.append(measured.rate)
                // The mock brokers run in this process: told apart by thread (librdkafka's threads serve the
                // producer's brokers; ours are the sink's and the delivery-report thread, which frees librdkafka's
                // messages too).
                let threads = ["ours", "librdkafka", "mock"].map { name in
                    String(format: "%@ %.2f", name, (measured.threads[name] ?? 0) / Double(count) * 1e6)
                }
                cpu.append(
                    perEvent("ours+mock", measured.cpuSeconds, "", 0, count) + " (" + threads.joined(separator: ", ")
                        + ")"
                )
                guard withPeer else { continue }
                let mockBefore = LivePipelineBenchmark.processCPUSeconds()
                let peer = try peerResult(
                    script: "broker_peers/bench_kafka_producer.py",
                    arguments: [cluster.bootstrapServers, "bench-peer", "\(count)", "--page", "\(drive.peerPage)"]
                        + properties.flatMap { ["--property", "\($0)=\($1)"] }
                )
                peers.append(peer.rate)
                cpu.append(
                    perEvent(
                        "peer",
                        peer.cpuSeconds,
                        "mock",
                        LivePipelineBenchmark.processCPUSeconds() - mockBefore,
                        count
                    )
                )
                // The two ceilings in turns, first one then the other (a shared machine's speed drifts within a run).
                for recordingOutcomes in run % 2 == 0 ? [false, true] : [true, false] {
                    let ceiling = try peerResult(
                        output: try HelperProcess.runToEnd(
                            executable: ceilingProgram,
                            arguments: ["\(count)", drive.rawValue, "\(outstanding)"]
                                + (recordingOutcomes ? ["outcomes"] : []) + properties.map { "\($0)=\($1)" }
                        )
                    )
                    if recordingOutcomes { outcomeCeilings.append(ceiling.rate) } else { ceilings.append(ceiling.rate) }
                    let name = recordingOutcomes ? "outcome ceiling+mock" : "ceiling+mock"
                    cpu.append(perEvent(name, ceiling.cpuSeconds, "", 0, count))
                }
            }
            FileHandle.standardError.write(
                Data(
                    "kafka-sink \(drive.rawValue): CPU µs/event \(cpu.joined(separator: "; ")), load \(loadAverage())\n"
                        .utf8
                )
            )
            let what = "delivery-reported events/s (mock cluster, 3 brokers, acks=all)"
            let bound = "max_outstanding \(outstanding)"
            // One line per peer: ours / the ceiling is the JSON line of "C librdkafka (ceiling)"; the ceiling that
            // records each outcome as the sink does is a second line.
            let compared =
                withPeer
                ? [
                    ("python-confluent-kafka", peers), ("C librdkafka (ceiling)", ceilings),
                    ("C librdkafka recording each outcome per batch (outcome ceiling)", outcomeCeilings),
                ] : [("", [])]
            for (peer, rates) in compared {
                report("kafka-sink", drive: drive, what: what, ours: ours, peer: peer, peers: rates, streamBound: bound)
            }
        }
    }
}
