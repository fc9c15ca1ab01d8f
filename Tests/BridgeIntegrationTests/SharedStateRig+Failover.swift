import BridgeTestSupport
import Foundation
import Testing

/// What the broker sinks' shared-state suites share: a failover in the middle of a stream of changes, what a reader
/// must then have received, and the dead letters each bridge lists.
extension SharedStateRig {
    /// Starts an active/standby pair on `yaml` (which keeps the NDJSON sink `out.ndjson`), makes 300 changes to
    /// articles 20 ms apart, SIGKILLs the active bridge once its NDJSON file has 30 of them, and waits until the
    /// standby took over and every change was made. Returns the changes' event ids, the bridge active now and how
    /// many the killed one had written to its file.
    func failOverMidStream(_ emulator: Emulator, config yaml: String) throws
        -> (expected: [String], survivor: BridgeProcess, deliveredByFirst: Int)
    {
        let (active, standby) = try startPair(config: yaml)
        let before = try emulator.newestActivityID()
        try emulator.control("generator", ["collection": "articles", "count": 300, "interval_ms": 20, "kind": "mixed"])
        #expect(active.waitUntil(timeout: 30) { delivered($0).count >= 30 }, "\(active.stderr.suffix(3000))")
        active.send(SIGKILL)
        #expect(active.waitForExit() != nil)
        let deliveredByFirst = delivered(active).count
        #expect(standby.waitForLog("became active", timeout: 30), "\(standby.stderr.suffix(3000))")
        try emulator.waitForGenerators(timeout: 90)
        let expected = try emulator.activityIDs(["articles"], after: before).map { "act_\($0)" }
        #expect(expected.count == 300)
        return (expected, standby, deliveredByFirst)
    }

    /// Checks what a reader of a sink without deduplication (MQTT QoS 1, AMQP) received across a failover, as
    /// (event id the message carries in its metadata, its payload): every change at least once, nothing else, and a
    /// repeat recognisable as one, by the id its metadata and its payload both carry. Returns how many were repeats.
    @discardableResult
    func expectEveryChangeAtLeastOnce(_ received: [(id: String?, payload: String)], expected: [String]) -> Int {
        let ids = received.compactMap(\.id)
        #expect(ids.count == received.count, "messages without an id")
        let missing = Set(expected).subtracting(ids)
        #expect(missing.isEmpty, "\(missing.count) changes never arrived: \(missing.sorted().prefix(10))")
        #expect(Set(ids).isSubset(of: expected), "nothing but the changes made")
        let unlike = received.filter { message in
            let event = try? JSONSerialization.jsonObject(with: Data(message.payload.utf8)) as? [String: Any]
            return event?["id"] as? String != message.id
        }
        #expect(unlike.isEmpty, "messages whose id is not their payload's: \(unlike.prefix(3))")
        return ids.count - Set(ids).count
    }

    /// The dead letters of sink `sink` that `dlq list --json` run in `bridge`'s directory lists.
    func deadLetters(_ sink: String, in bridge: BridgeProcess) throws -> [[String: Any]] {
        let list = try BridgeProcess(
            arguments: ["dlq", "list", "--json", "--sink", sink, "--config", "bridge.yaml"],
            directory: bridge.directory)
        #expect(list.waitForExit(timeout: 30) == 0, "\(list.stderr)")
        return list.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// The one dead letter of `sink`, for item `key`, as `dlq list` run in either bridge's directory lists it (the
    /// bucket holds it, whichever bridge made it), its reason containing `reason` when given; returns its id.
    func oneDeadLetterListedByBoth(
        _ sink: String, key: String, reason: String? = nil, _ active: BridgeProcess, _ standby: BridgeProcess
    ) throws -> String {
        let fromActive = try deadLetters(sink, in: active)
        let fromStandby = try deadLetters(sink, in: standby)
        #expect(fromActive.count == 1 && fromActive.first?["key"] as? String == key, "\(fromActive)")
        if let reason {
            #expect((fromActive.first?["reason"] as? String)?.contains(reason) == true, "\(fromActive)")
        }
        let letterID = try #require(fromActive.first?["id"] as? String)
        #expect(fromStandby.map { $0["id"] as? String } == [letterID], "\(fromStandby)")
        return letterID
    }

    /// Freezes the standby (SIGSTOP: it holds no lease, so that changes nothing) and then SIGKILLs the active bridge:
    /// what the test does before the standby may take over happens whatever the machine's speed.
    func freezeStandbyAndKillActive(_ active: BridgeProcess, _ standby: BridgeProcess) {
        standby.send(SIGSTOP)
        #expect(standby.waitUntil(timeout: 10) { isStopped($0.pid) })
        active.send(SIGKILL)
        #expect(active.waitForExit() != nil)
    }

    /// Runs `dlq replay --sink sink` in `bridge`'s directory and expects it to mark one dead letter.
    func replayOneDeadLetter(_ sink: String, in bridge: BridgeProcess) throws {
        let replay = try BridgeProcess(
            arguments: ["dlq", "replay", "--sink", sink, "--config", "bridge.yaml"], directory: bridge.directory)
        #expect(replay.waitForExit(timeout: 30) == 0, "\(replay.stderr)")
        #expect(replay.stderr.contains("replayed 1 dead letter"), "\(replay.stderr)")
    }

    /// The shared-state config with `entry` (a sink's list entry) after the NDJSON sink.
    func config(_ emulator: Emulator, _ servers: [NATSServer], adding entry: String) throws -> String {
        let ndjson = "  - type: ndjson\n    path: \"out.ndjson\""
        let yaml = config(emulator, servers).replacingOccurrences(of: ndjson, with: ndjson + "\n" + entry)
        try #require(yaml.contains(entry))
        return yaml
    }
}
