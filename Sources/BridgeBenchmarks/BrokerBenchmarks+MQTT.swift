import BridgeSinks
import Foundation

extension BrokerBenchmarks {
    /// `mqtt-sink`: a `type: mqtt` sink (QoS 1, the contract's user properties, `max_in_flight` 1000) into a local
    /// mosquitto, against two peers publishing the same messages in the same run: libmosquitto
    /// (`Benchmarks/mqtt_libmosquitto_peer.c`, built by Benchmarks/run next to this executable: the library's and
    /// the broker's ceiling, as mosquitto ships no load tool) and paho-mqtt
    /// (Tests/tools/broker_peers/bench_mqtt_publisher.py), each with the sink's in-flight window.
    ///
    ///     bridge-benchmarks mqtt-sink [COUNT [runs=N] [nopeer] [drive=pages|stream] [outstanding=N]]
    ///                                                                   (default 50000 events, 5 runs)
    static func runMQTT(_ arguments: [String]) async throws {
        defer { removeStateDirectory() }
        let (count, runs, withPeer) = options(arguments, defaultCount: 50_000)
        let broker = try BenchServer.mosquitto()
        defer { broker.stop() }
        var config = MQTTSinkConfig(url: "mqtt://127.0.0.1:\(broker.port)", topic: "bench/{collection}/{event}")
        if let inFlight = value(of: "outstanding", in: arguments).flatMap(Int.init) { config.maxInFlight = inFlight }
        FileHandle.standardError.write(Data("mqtt-sink: QoS 1, max_in_flight \(config.maxInFlight)\n".utf8))
        let sinkConfig = config
        let libmosquitto = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("mqtt-libmosquitto-peer").path
        try await Comparison(
            name: "mqtt-sink",
            serverName: "broker",
            serverCPU: broker.cpuSeconds,
            makeSink: { try MQTTSinkType.makeConnector(sinkConfig, context: benchContext()) },
            peers: [
                Comparison.Peer(name: "C libmosquitto (ceiling)", label: "libmosquitto") { drive, prefix in
                    try peerResult(
                        output: try HelperProcess.runToEnd(
                            executable: libmosquitto,
                            arguments: [
                                "\(broker.port)", "\(count)", drive.rawValue, prefix, "\(sinkConfig.maxInFlight)",
                            ]
                        )
                    )
                },
                .python("python-paho-mqtt", label: "paho", script: "broker_peers/bench_mqtt_publisher.py") {
                    drive, prefix in
                    [
                        "127.0.0.1", "\(broker.port)", "bench/py/update", "\(count)", "--window",
                        "\(sinkConfig.maxInFlight)", "--page", "\(drive.peerPage)", "--prefix", prefix,
                    ]
                },
            ],
            what: "PUBACKed events/s (QoS 1, one mosquitto)",
            bound: "max_in_flight \(config.maxInFlight)"
        ).run(arguments, count: count, runs: runs, withPeer: withPeer)
    }
}
