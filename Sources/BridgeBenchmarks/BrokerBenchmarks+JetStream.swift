import BridgeEvents
import BridgeNATS
import BridgeSinks
import BridgeSystem
import Foundation

extension BrokerBenchmarks {
    /// `jetstream-sink`: ours and nats-py into a local nats-server (see `BrokerBenchmarks`).
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
        try await Comparison(
            name: "jetstream-sink",
            serverName: "server",
            serverCPU: server.cpuSeconds,
            makeSink: { try JetStreamSinkType.makeConnector(sinkConfig, context: benchContext()) },
            peers: [
                .python("python-nats-py", label: "nats-py", script: "broker_peers/bench_nats_publisher.py") {
                    drive, prefix in
                    [server.url, "bench.py.update", "\(count)", "--page", "\(drive.peerPage)", "--prefix", prefix]
                }
            ],
            what: "acknowledged events/s (file-storage stream, one server)",
            bound: "max_outstanding \(config.maxOutstanding)"
        ).run(arguments, count: count, runs: runs, withPeer: withPeer)
    }
}
