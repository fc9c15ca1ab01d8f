import BridgeEvents
import BridgeSinks
import Foundation

extension BrokerBenchmarks {
    /// `mqtt-sink`: ours and paho-mqtt, QoS 1, into a local mosquitto (see `BrokerBenchmarks`).
    static func runMQTT(_ arguments: [String]) async throws {
        defer { removeStateDirectory() }
        let (count, runs, withPeer) = options(arguments, defaultCount: 50_000)
        let broker = try BenchMosquitto.start()
        defer { broker.stop() }
        var config = MQTTSinkConfig(url: "mqtt://127.0.0.1:\(broker.port)", topic: "bench/{collection}/{event}")
        if let inFlight = value(of: "outstanding", in: arguments).flatMap(Int.init) { config.maxInFlight = inFlight }
        FileHandle.standardError.write(Data("mqtt-sink: QoS 1, max_in_flight \(config.maxInFlight)\n".utf8))
        for drive in drives(arguments) {
            var ours: [Double] = []
            var peers: [Double] = []
            var cpu: [String] = []
            for run in 0..<runs {
                let events = makeEvents(count: count, prefix: "evt\(drive.rawValue)\(run)")
                let sink = try MQTTSinkType.makeConnector(config, context: benchContext())
                let brokerBefore = broker.cpuSeconds()
                let measured = try await measure(sink, events: events, drive: drive)
                ours.append(measured.rate)
                cpu.append(perEvent("ours", measured.cpuSeconds, "broker", broker.cpuSeconds() - brokerBefore, count))
                guard withPeer else { continue }
                let peerBrokerBefore = broker.cpuSeconds()
                let peer = try peerResult(
                    script: "broker_peers/bench_mqtt_publisher.py",
                    arguments: [
                        "127.0.0.1", "\(broker.port)", "bench/py/update", "\(count)", "--window",
                        "\(config.maxInFlight)", "--page", "\(drive.peerPage)", "--prefix", "py\(drive.rawValue)\(run)",
                    ]
                )
                peers.append(peer.rate)
                cpu.append(perEvent("peer", peer.cpuSeconds, "broker", broker.cpuSeconds() - peerBrokerBefore, count))
            }
            FileHandle.standardError.write(
                Data(
                    "mqtt-sink \(drive.rawValue): CPU µs/event \(cpu.joined(separator: "; ")), load \(loadAverage())\n"
                        .utf8
                )
            )
            report(
                "mqtt-sink",
                drive: drive,
                what: "PUBACKed events/s (QoS 1, one mosquitto)",
                ours: ours,
                peer: "python-paho-mqtt",
                peers: peers,
                bound: "max_in_flight \(config.maxInFlight)"
            )
        }
    }
}
