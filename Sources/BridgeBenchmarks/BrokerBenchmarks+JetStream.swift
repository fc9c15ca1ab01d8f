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
        for drive in drives(arguments) {
            var ours: [Double] = []
            var peers: [Double] = []
            var cpu: [String] = []
            for run in 0..<runs {
                // Ids of their own per run: the stream would drop repeated ones as duplicates (acknowledged anyway).
                let events = makeEvents(count: count, prefix: "evt\(drive.rawValue)\(run)")
                let sink = try JetStreamSinkType.makeConnector(config, context: benchContext())
                let serverBefore = server.cpuSeconds()
                let measured = try await measure(sink, events: events, drive: drive)
                ours.append(measured.rate)
                cpu.append(perEvent("ours", measured.cpuSeconds, "server", server.cpuSeconds() - serverBefore, count))
                guard withPeer else { continue }
                let peerServerBefore = server.cpuSeconds()
                let peer = try peerResult(
                    script: "broker_peers/bench_nats_publisher.py",
                    arguments: [
                        server.url, "bench.py.update", "\(count)", "--page", "\(drive.peerPage)",
                        "--prefix", "py\(drive.rawValue)\(run)",
                    ]
                )
                peers.append(peer.rate)
                cpu.append(perEvent("peer", peer.cpuSeconds, "server", server.cpuSeconds() - peerServerBefore, count))
            }
            FileHandle.standardError.write(
                Data(
                    "jetstream-sink \(drive.rawValue): CPU µs/event \(cpu.joined(separator: "; ")), load \(loadAverage())\n"
                        .utf8
                )
            )
            report(
                "jetstream-sink",
                drive: drive,
                what: "acknowledged events/s (file-storage stream, one server)",
                ours: ours,
                peer: "python-nats-py",
                peers: peers
            )
        }
    }
}
