import BridgeSinks
import Foundation

extension BrokerBenchmarks {
    /// `amqp-sink`: a `type: amqp` sink with the contract's defaults (persistent, mandatory, publisher confirms,
    /// `max_in_flight` 1000) into a local rabbitmq-server, publishing to a durable topic exchange with one durable
    /// queue bound for everything, against two peers publishing the same messages in the same run — librabbitmq
    /// (`Benchmarks/amqp_librabbitmq_peer.c`, built by Benchmarks/run next to this executable: the broker's ceiling
    /// for these publishes, as RabbitMQ's own PerfTest is not packaged here) and pika with confirms
    /// (Tests/tools/broker_peers/bench_amqp_publisher.py), each with the sink's in-flight window.
    ///
    ///     bridge-benchmarks amqp-sink [COUNT [runs=N] [nopeer] [drive=pages|stream] [outstanding=N]]
    ///                                                                   (default 50000 events, 5 runs)
    ///
    /// The queue is purged after each client's run (outside the timed part), so every run starts on an empty queue.
    static func runAMQP(_ arguments: [String]) async throws {
        defer { removeStateDirectory() }
        let (count, runs, withPeer) = options(arguments, defaultCount: 50_000)
        let broker = try BenchServer.rabbitmq()
        defer { broker.stop() }
        let (exchange, queue) = ("bench", "bench")
        let admin = try HelperProcess.runToEnd(
            script: "broker_peers/amqp_admin.py",
            arguments: ["setup", broker.url, exchange, queue, "#"]
        )
        guard admin.isEmpty else { throw BenchmarkFailure.badPeerOutput(admin) }
        func purge() throws {
            let purged = try HelperProcess.runToEnd(
                script: "broker_peers/amqp_admin.py",
                arguments: ["purge", broker.url, queue]
            )
            guard Int(purged) != nil else { throw BenchmarkFailure.badPeerOutput(purged) }
        }
        var config = AMQPSinkConfig(url: broker.url, exchange: exchange)
        if let inFlight = value(of: "outstanding", in: arguments).flatMap(Int.init) { config.maxInFlight = inFlight }
        FileHandle.standardError.write(Data("amqp-sink: confirms, max_in_flight \(config.maxInFlight)\n".utf8))
        let sinkConfig = config
        let librabbitmq = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("amqp-librabbitmq-peer").path
        let window = "\(sinkConfig.maxInFlight)"
        try await Comparison(
            name: "amqp-sink",
            serverName: "broker",
            serverCPU: broker.cpuSeconds,
            makeSink: { try AMQPSinkType.makeConnector(sinkConfig, context: benchContext()) },
            peers: [
                Comparison.Peer(name: "C librabbitmq (ceiling)", label: "librabbitmq") { drive, prefix in
                    try peerResult(
                        output: try HelperProcess.runToEnd(
                            executable: librabbitmq,
                            arguments: ["\(broker.port)", "\(count)", drive.rawValue, exchange, prefix, window]
                        )
                    )
                },
                .python("python-pika confirms", label: "pika", script: "broker_peers/bench_amqp_publisher.py") {
                    drive, prefix in
                    [
                        broker.url, exchange, "articles.update", "\(count)", "--window", window, "--page",
                        "\(drive.peerPage)", "--prefix", prefix,
                    ]
                },
            ],
            what: "confirmed events/s (persistent, durable queue, one rabbitmq-server)",
            bound: "max_in_flight \(config.maxInFlight)",
            reset: purge
        ).run(arguments, count: count, runs: runs, withPeer: withPeer)
    }
}
