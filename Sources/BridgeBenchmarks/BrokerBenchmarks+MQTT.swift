import BridgeSinks
import Foundation

extension BrokerBenchmarks {
    /// `mqtt-sink`: ours and paho-mqtt, QoS 1, into a local mosquitto (see `BrokerBenchmarks`).
    static func runMQTT(_ arguments: [String]) async throws {
        defer { removeStateDirectory() }
        let (count, runs, withPeer) = options(arguments, defaultCount: 50_000)
        let broker = try BenchServer.mosquitto()
        defer { broker.stop() }
        var config = MQTTSinkConfig(url: "mqtt://127.0.0.1:\(broker.port)", topic: "bench/{collection}/{event}")
        if let inFlight = value(of: "outstanding", in: arguments).flatMap(Int.init) { config.maxInFlight = inFlight }
        FileHandle.standardError.write(Data("mqtt-sink: QoS 1, max_in_flight \(config.maxInFlight)\n".utf8))
        let sinkConfig = config
        try await Comparison(
            name: "mqtt-sink",
            serverName: "broker",
            serverCPU: broker.cpuSeconds,
            makeSink: { try MQTTSinkType.makeConnector(sinkConfig, context: benchContext()) },
            peers: [
                .python("python-paho-mqtt", label: "paho", script: "broker_peers/bench_mqtt_publisher.py") {
                    drive, prefix in
                    [
                        "127.0.0.1", "\(broker.port)", "bench/py/update", "\(count)", "--window",
                        "\(sinkConfig.maxInFlight)", "--page", "\(drive.peerPage)", "--prefix", prefix,
                    ]
                }
            ],
            what: "PUBACKed events/s (QoS 1, one mosquitto)",
            bound: "max_in_flight \(config.maxInFlight)"
        ).run(arguments, count: count, runs: runs, withPeer: withPeer)
    }
}
