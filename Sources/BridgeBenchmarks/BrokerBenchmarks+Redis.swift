import BridgeEvents
import BridgeRedis
import BridgeSinks
import BridgeSystem
import Foundation

extension BrokerBenchmarks {
    /// `redis-sink`: a `type: redis` sink with the contract's defaults (dedup window on, `max_in_flight` 1000) into a
    /// local redis-server kept in memory, against two peers doing the same appends in the same run — libhiredis
    /// (`Benchmarks/redis_hiredis_peer.c`, built by Benchmarks/run next to this executable) and redis-py pipelines
    /// (Tests/tools/broker_peers/bench_redis_pipeline.py) — each loading the sink's own dedup script. The server's
    /// ceiling for that script is measured first with its own tool, `redis-benchmark`.
    ///
    ///     bridge-benchmarks redis-sink [COUNT [runs=N] [nopeer] [drive=pages|stream]]
    ///                                                                   (default 100000 events, 5 runs)
    ///
    /// Every run starts on an empty server (`FLUSHALL` after each client's run, outside the timed part), so the
    /// streams and the dedup keys of earlier runs neither fill the memory nor slow the next.
    static func runRedis(_ arguments: [String]) async throws {
        defer { removeStateDirectory() }
        let (count, runs, withPeer) = options(arguments, defaultCount: 100_000)
        let server = try BenchServer.redis()
        defer { server.stop() }
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("bench-redis-script-\(getpid()).lua")
        try RedisDedupScript.source.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let hiredis = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("redis-hiredis-peer").path
        let config = RedisSinkConfig(url: server.url)
        let admin = RedisClient(settings: try config.clientSettings())
        defer { admin.close() }
        func flush() async throws {
            var commands = RedisCommands()
            commands.command("FLUSHALL")
            guard try await admin.pipeline(commands) == [.status("OK")] else {
                throw BenchmarkError(message: "FLUSHALL failed")
            }
        }

        var load = RedisCommands()
        load.command("SCRIPT", "LOAD", RedisDedupScript.source)
        guard try await admin.pipeline(load).first?.text == RedisDedupScript.sha1 else {
            throw BenchmarkError(message: "SCRIPT LOAD of the dedup script failed")
        }
        let ceiling = try serverCeiling(server, count: count)
        try await flush()
        FileHandle.standardError.write(
            Data("redis-sink: redis-benchmark ceiling of the dedup script \(String(format: "%.0f", ceiling))/s\n".utf8)
        )
        BenchmarkResult(
            benchmark: "redis-sink",
            metric: "server ceiling: redis-benchmark -c 4 -P 500, the sink's EVALSHA, answered/s",
            value: ceiling,
            unit: "1/s"
        ).emit()
        try await Comparison(
            name: "redis-sink",
            serverName: "server",
            serverCPU: server.cpuSeconds,
            makeSink: { try RedisSinkType.makeConnector(config, context: benchContext()) },
            peers: [
                Comparison.Peer(name: "C libhiredis", label: "hiredis") { drive, prefix in
                    try peerResult(
                        output: try HelperProcess.runToEnd(
                            executable: hiredis,
                            arguments: ["\(server.port)", "\(count)", drive.rawValue, script.path, prefix]
                        )
                    )
                },
                .python(
                    "python-redis-py pipelines of 500",
                    label: "redis-py",
                    script: "broker_peers/bench_redis_pipeline.py"
                ) { _, prefix in [server.url, "\(count)", script.path, "--prefix", prefix] },
            ],
            what: "answered appends/s (dedup script, in-memory redis-server)",
            bound: "max_in_flight \(config.maxInFlight)",
            reset: flush
        ).run(arguments, count: count, runs: runs, withPeer: withPeer)
    }

    /// `redis-benchmark` (4 connections, pipelines of 500) running the sink's EVALSHA with a random event id per
    /// append and the benchmark's ~450-byte payload: the server's own rate for these appends on this machine.
    private static func serverCeiling(_ server: BenchServer, count: Int) throws -> Double {
        let payload = String(decoding: makeEvents(count: 1, prefix: "ceiling")[0].body, as: UTF8.self)
        let output = try HelperProcess.runToEnd(
            executable: "/usr/bin/redis-benchmark",
            arguments: [
                "-h", "127.0.0.1", "-p", "\(server.port)", "-c", "4", "-P", "500", "-n", "\(count)",
                "-r", "1000000000", "-q", "EVALSHA", RedisDedupScript.sha1, "2", "directus.articles",
                "directus-bridge:dedup:directus.articles:evt___rand_int__", "86400", "0", "id", "evt___rand_int__",
                "type", "directus.items.update", "collection", "articles", "key", "item-1", "event", "update",
                "payload", payload,
            ]
        )
        // `-q` ends each test with "<command>: <rate> requests per second, p50=… msec".
        let rate = output.split(separator: "\n").last { $0.contains("requests per second") }
            .flatMap { line in line.components(separatedBy: "requests per second").first }
            .flatMap { $0.split(separator: " ").last }
            .flatMap { Double($0) }
        guard let rate, rate > 0 else { throw BenchmarkFailure.badPeerOutput(output) }
        return rate
    }
}
