import BridgeSinks
import Foundation

extension BrokerBenchmarks {
    /// A benchmark's comparison against a server process: for each drive, `runs` runs of ours (a new sink from
    /// `makeSink`, events with ids of their own per run) and of the peer (`peer.script` with the arguments
    /// `peer.arguments` makes for the drive and an id prefix) alternately; CPU per event of each and of the server,
    /// then the report.
    struct Comparison {
        var name: String
        var serverName: String
        var serverCPU: () -> Double
        var makeSink: () throws -> any SinkConnector
        var peer: (name: String, script: String, arguments: (Drive, String) -> [String])
        var what: String
        var bound: String

        func run(_ arguments: [String], count: Int, runs: Int, withPeer: Bool) async throws {
            for drive in drives(arguments) {
                var ours: [Double] = []
                var peers: [Double] = []
                var cpu: [String] = []
                for run in 0..<runs {
                    let events = makeEvents(count: count, prefix: "evt\(drive.rawValue)\(run)")
                    let sink = try makeSink()
                    let serverBefore = serverCPU()
                    let measured = try await measure(sink, events: events, drive: drive)
                    ours.append(measured.rate)
                    cpu.append(perEvent("ours", measured.cpuSeconds, serverName, serverCPU() - serverBefore, count))
                    guard withPeer else { continue }
                    let peerServerBefore = serverCPU()
                    let result = try peerResult(
                        script: peer.script,
                        arguments: peer.arguments(drive, "py\(drive.rawValue)\(run)")
                    )
                    peers.append(result.rate)
                    cpu.append(
                        perEvent("peer", result.cpuSeconds, serverName, serverCPU() - peerServerBefore, count)
                    )
                }
                FileHandle.standardError.write(
                    Data(
                        "\(name) \(drive.rawValue): CPU µs/event \(cpu.joined(separator: "; ")), load \(loadAverage())\n"
                            .utf8
                    )
                )
                report(name, drive: drive, what: what, ours: ours, peer: peer.name, peers: peers, streamBound: bound)
            }
        }
    }
}
