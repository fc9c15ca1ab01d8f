import BridgeTestSupport
import Foundation
import Testing

/// A Redis sink on shared state (`state.backend: jetstream`): two bridges on one name, the active one killed in the
/// middle of a stream of changes; the standby resumes from the shared cursor, so it sends again what the dead bridge
/// appended after its last saved cursor, and the dedup window keeps each event id once in the stream (read back with
/// redis-py).
@Suite(.serialized, .timeLimit(.minutes(10))) struct SharedStateRedisSinkTests: SharedStateRig {
    /// The shared-state config with a redis sink named `cache` beside the NDJSON file (which shows each bridge's
    /// progress without a Python process per look).
    func redisConfig(_ emulator: Emulator, _ servers: [NATSServer], _ redis: RedisServer) throws -> String {
        try config(emulator, servers, adding: "  - type: redis\n    name: cache\n    url: \(redis.url())")
    }

    @Test func aKilledActiveBridgesStandbyAppendsEveryChangeExactlyOnce() throws {
        let server = try startedSingleServer("shared-redis-kill")
        let redis = try RedisServer(in: try TestEnvironment.makeTemporaryDirectory(prefix: "shared-redis"))
        try redis.start()
        let emulator = try Emulator()
        defer { emulator.stop() }
        let (active, standby) = try startPair(config: try redisConfig(emulator, [server], redis))
        let before = try emulator.newestActivityID()
        try emulator.control("generator", ["collection": "articles", "count": 300, "interval_ms": 20, "kind": "mixed"])
        #expect(active.waitUntil(timeout: 30) { delivered($0).count >= 30 }, "\(active.stderr.suffix(3000))")
        // The standby frozen while the test stands in for the dead bridge below.
        freezeStandbyAndKillActive(active, standby)
        let appendedByFirst = Set(try redis.readStream("directus.articles").compactMap { $0.fields["id"] })
        // A bridge killed between an append's answer and saving its cursor leaves appends beyond the shared cursor.
        // When that gap happens to be empty, nothing would be sent twice: stand in for the dead bridge and append
        // the next five changes as it would have (the entry and its dedup key), so the standby must send them again.
        let unsent = try emulator.recordedChanges(after: before).filter { !appendedByFirst.contains("act_\($0.id)") }
        let standIns = Array(unsent.prefix(5))
        for change in standIns {
            let id = "act_\(change.id)"
            let type = "directus.items.\(change.action)"
            let payload =
                #"{"id":"\#(id)","type":"\#(type)","collection":"articles","key":"\#(change.key)","event":"\#(change.action)"}"#
            try redisCLI(redis, [
                "XADD", "directus.articles", "*", "id", id, "type", type, "collection", "articles", "key", change.key,
                "event", change.action, "payload", payload,
            ])
            try redisCLI(redis, ["SET", "directus-bridge:dedup:directus.articles:\(id)", "1-0", "EX", "86400"])
        }
        try #require(standIns.count == 5 && !standby.stderr.contains("became active"), "stood in too late")
        standby.send(SIGCONT)
        #expect(standby.waitForLog("became active", timeout: 30), "\(standby.stderr.suffix(3000))")
        try emulator.waitForGenerators(timeout: 90)
        let expected = try emulator.activityIDs(["articles"], after: before).map { "act_\($0)" }
        #expect(expected.count == 300)

        let deadline = Date().addingTimeInterval(TestEnvironment.patient(60))
        var entries = try redis.readStream("directus.articles")
        while !Set(entries.compactMap { $0.fields["id"] }).isSuperset(of: expected) && Date() < deadline {
            usleep(500_000)
            entries = try redis.readStream("directus.articles")
        }
        let ids = entries.compactMap { $0.fields["id"] }
        let missing = Set(expected).subtracting(ids)
        #expect(missing.isEmpty, "\(missing.count) changes never appended: \(missing.sorted().prefix(10))")
        #expect(Set(ids).isSubset(of: expected), "nothing but the changes made")
        let twice = Dictionary(grouping: ids) { $0 }.filter { $0.value.count > 1 }.keys.sorted()
        #expect(twice.isEmpty, "appended twice: \(twice.prefix(10))")
        // Each entry carries the event its fields name (a backfilled event's `data` is the item as its reader found
        // it, so entries are not compared with the NDJSON sink's lines).
        let differing = entries.filter { entry in
            guard let payload = entry.fields["payload"],
                let event = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
            else { return true }
            return ["id", "type", "collection", "key", "event"].contains { name in
                entry.fields[name] != event[name].map { "\($0)" }
            }
        }
        #expect(differing.isEmpty, "entries unlike their payload: \(differing.prefix(3))")
        // What the dead bridge appended after the shared cursor, the standby sent again: the window skipped it.
        let skipped = metric(standby, "directus_bridge_broker_duplicates_total", ["sink": "cache"]) ?? 0
        print(
            "shared state redis failover: \(appendedByFirst.count) appended before the kill, \(skipped) re-sends "
                + "skipped by the dedup window")
        #expect(skipped >= Double(standIns.count), "the standby re-sent what the dead bridge appended")
        standby.send(SIGTERM)
        #expect(standby.waitForExit() == 0, "\(standby.stderr.suffix(2000))")
    }

    /// A Redis sink's dead letter lives in the bucket: bridge A's append meets a key of another type (WRONGTYPE),
    /// and `dlq list` run in either bridge's directory lists it; A dies; the key is removed, `dlq replay` run in B's
    /// directory marks it, and B, active now, appends it with its event id.
    @Test func aRedisSinksDeadLetterIsSeenFromEitherBridgeAndReplayedByTheNextActiveOne() throws {
        let server = try startedSingleServer("shared-redis-dlq")
        let redis = try RedisServer(in: try TestEnvironment.makeTemporaryDirectory(prefix: "shared-redis-dlq"))
        try redis.start()
        try redisCLI(redis, ["SET", "directus.articles", "not a stream"])
        let emulator = try Emulator()
        defer { emulator.stop() }
        let yaml = try redisConfig(emulator, [server], redis)
        let (active, standby) = try startPair(config: yaml)
        let key = try #require(try emulator.createArticles(1, title: "refused").first)
        #expect(active.waitForLog("stored as a dead letter", timeout: 60), "\(active.stderr.suffix(3000))")

        let letterID = try oneDeadLetterListedByBoth("cache", key: key, reason: "WRONGTYPE", active, standby)

        active.send(SIGKILL)
        #expect(active.waitForExit() != nil)
        #expect(standby.waitForLog("became active", timeout: 30), "\(standby.stderr.suffix(3000))")
        try redisCLI(redis, ["DEL", "directus.articles"])
        try replayOneDeadLetter("cache", in: standby)
        let deadline = Date().addingTimeInterval(TestEnvironment.patient(60))
        var entries = try redis.readStream("directus.articles")
        while entries.isEmpty && Date() < deadline {
            usleep(500_000)
            entries = try redis.readStream("directus.articles")
        }
        #expect(entries.map { $0.fields["id"] } == [letterID], "\(entries) \(standby.stderr.suffix(3000))")
        #expect(standby.waitForLog("replayed dead letters delivered", timeout: 30), "\(standby.stderr.suffix(3000))")
        #expect(try deadLetters("cache", in: standby).isEmpty)
        standby.send(SIGTERM)
        #expect(standby.waitForExit() == 0, "\(standby.stderr.suffix(2000))")
    }
}
