import BridgeEvents
import BridgeNATS
import BridgeSinks
import BridgeSystem
import Foundation

extension BrokerBenchmarks {
    /// `jetstream-sink`: ours, libnats and nats-py into a local nats-server (see `BrokerBenchmarks`). libnats
    /// (`Benchmarks/jetstream_libnats_peer.c`, built by Benchmarks/run next to this executable) is the C library
    /// BridgeNATS wraps, publishing the same messages (subject, `Nats-Msg-Id`, body) into the same stream with its
    /// own asynchronous publisher and the sink's `max_outstanding` in flight: what the library alone costs per
    /// acknowledged publish, beside the server's CPU per event measured the same way for each client.
    static func runJetStream(_ arguments: [String]) async throws {
        defer { removeStateDirectory() }
        let (count, runs, withPeer) = options(arguments, defaultCount: 100_000)
        let server = try BenchServer.nats()
        defer { server.stop() }
        let storage = value(of: "storage", in: arguments) ?? "file"
        let window = value(of: "window", in: arguments) ?? "120"
        let admin = try HelperProcess.runToEnd(
            script: "broker_peers/nats_admin.py",
            arguments: [
                "create-stream", server.url, "BENCH", "bench.>", "--storage", storage, "--duplicate-window", window,
            ]
        )
        guard admin.hasSuffix("OK") else { throw BenchmarkFailure.badPeerOutput(admin) }
        var config = JetStreamSinkConfig(servers: [server.url], subject: "bench.{collection}.{event}")
        if let outstanding = value(of: "outstanding", in: arguments).flatMap(Int.init) {
            config.maxOutstanding = outstanding
        }
        FileHandle.standardError.write(
            Data(
                "jetstream-sink: \(storage) storage, duplicate window \(window) s, max_outstanding \(config.maxOutstanding)\n"
                    .utf8
            )
        )
        let sinkConfig = config
        let libnats = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("jetstream-libnats-peer").path
        try await Comparison(
            name: "jetstream-sink",
            serverName: "server",
            serverCPU: server.cpuSeconds,
            makeSink: { try JetStreamSinkType.makeConnector(sinkConfig, context: benchContext()) },
            peers: [
                Comparison.Peer(name: "C libnats (ceiling)", label: "libnats") { drive, prefix in
                    try peerResult(
                        output: try HelperProcess.runToEnd(
                            executable: libnats,
                            arguments: [
                                server.url, "\(count)", drive.rawValue, prefix, "\(sinkConfig.maxOutstanding)",
                            ]
                        )
                    )
                },
                .python("python-nats-py", label: "nats-py", script: "broker_peers/bench_nats_publisher.py") {
                    drive, prefix in
                    [server.url, "bench.py.update", "\(count)", "--page", "\(drive.peerPage)", "--prefix", prefix]
                },
            ],
            what: "acknowledged events/s (file-storage stream, one server)",
            bound: "max_outstanding \(config.maxOutstanding)"
        ).run(arguments, count: count, runs: runs, withPeer: withPeer)
    }
}
