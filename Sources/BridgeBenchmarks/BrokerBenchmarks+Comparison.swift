import BridgeSinks
import Foundation

extension BrokerBenchmarks {
    /// A benchmark's comparison against a server process: for each drive, `runs` runs of ours (a new sink from
    /// `makeSink`, events with ids of their own per run) and of each peer alternately, `reset` after each client's
    /// run (outside the timed part: a server that keeps what it took starts every run empty); CPU per event of each
    /// and of the server, then one report per peer.
    struct Comparison {
        /// A client doing the same job as the sink.
        struct Peer {
            /// Its name in the report (`python-paho-mqtt`).
            var name: String
            /// Its name in the CPU line and the prefix of its event ids (`paho`).
            var label: String
            /// Runs it once for a drive with an event id prefix; its rate and CPU seconds.
            var run: (Drive, String) throws -> (rate: Double, cpuSeconds: Double)

            /// A Python peer: `script` under Tests/tools with the arguments `arguments` makes for the drive and an
            /// id prefix, printing its result as `peerResult(output:)` reads it.
            static func python(
                _ name: String,
                label: String,
                script: String,
                arguments: @escaping (Drive, String) -> [String]
            ) -> Peer {
                Peer(name: name, label: label) { drive, prefix in
                    try peerResult(script: script, arguments: arguments(drive, prefix))
                }
            }
        }

        var name: String
        var serverName: String
        var serverCPU: () -> Double
        var makeSink: () throws -> any SinkConnector
        var peers: [Peer]
        var what: String
        var bound: String
        var reset: () async throws -> Void = {}

        func run(_ arguments: [String], count: Int, runs: Int, withPeer: Bool) async throws {
            let peers = withPeer ? self.peers : []
            for drive in drives(arguments) {
                var ours: [Double] = []
                var rates = peers.map { _ in [Double]() }
                var cpu: [String] = []
                for run in 0..<runs {
                    let events = makeEvents(count: count, prefix: "evt\(drive.rawValue)\(run)")
                    let sink = try makeSink()
                    let serverBefore = serverCPU()
                    let measured = try await measure(sink, events: events, drive: drive)
                    ours.append(measured.rate)
                    cpu.append(perEvent("ours", measured.cpuSeconds, serverName, serverCPU() - serverBefore, count))
                    try await reset()
                    for (index, peer) in peers.enumerated() {
                        let peerServerBefore = serverCPU()
                        let result = try peer.run(drive, "\(peer.label)\(drive.rawValue)\(run)")
                        rates[index].append(result.rate)
                        cpu.append(
                            perEvent(peer.label, result.cpuSeconds, serverName, serverCPU() - peerServerBefore, count)
                        )
                        try await reset()
                    }
                }
                FileHandle.standardError.write(
                    Data(
                        "\(name) \(drive.rawValue): CPU µs/event \(cpu.joined(separator: "; ")), load \(loadAverage())\n"
                            .utf8
                    )
                )
                if peers.isEmpty {
                    report(name, drive: drive, what: what, ours: ours, peer: "", peers: [], streamBound: bound)
                }
                for (index, peer) in peers.enumerated() {
                    report(
                        name, drive: drive, what: what, ours: ours, peer: peer.name, peers: rates[index],
                        streamBound: bound
                    )
                }
            }
        }
    }
}
