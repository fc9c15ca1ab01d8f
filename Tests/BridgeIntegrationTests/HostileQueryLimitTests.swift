import BridgeTestSupport
import Foundation
import Testing

/// Directus's `QUERY_LIMIT_MAX` as a broken or hostile server gives it (docs/RELIABILITY.md, "Wire numbers and traps:
/// audit"): `/server/info`'s `queryLimit.max` raw on the wire (a number beyond 64 bits, a fraction, `Infinity`, which
/// is not JSON and leaves the whole answer unreadable, a string), and a refusal that names `1e+300`. The emulator
/// holds every read to its real maximum all the while; the bridge learns it from the first refusal and reads on in
/// requests within it. Real binary.
@Suite(.serialized) struct HostileQueryLimitTests {
    private static let subscription = "  - collection: articles\n    snapshot: true"

    /// Runs the bridge against `emulator` until its snapshot is done and a sentinel created after it arrives; returns
    /// the snapshot's keys (with repeats) and the bridge's stderr.
    private func snapshotKeys(_ emulator: Emulator) throws -> (keys: [String], stderr: String) {
        let bridge = try BridgeProcess.run(
            config: activityConfig(url: emulator.url, pollInterval: "200ms", subscriptions: Self.subscription))
        #expect(bridge.waitForLog("snapshot done", timeout: 60), "\(bridge.stderr.suffix(3000))")
        let sentinel = try emulator.create("articles", ["title": "sentinel", "status": "published"])
        let events = try #require(bridge.events(beforeSentinel: sentinel, timeout: 30), "\(bridge.stderr.suffix(3000))")
        let keys = events.filter { $0["event"] as? String == "snapshot" }.compactMap { $0["key"] as? String }
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(3000))")
        return (keys, bridge.stderr)
    }

    @Test(arguments: ["9223372036854775807", "99999999999999999999999", "1e300", "2.5", "Infinity", "\"100\"", "-5", "0"])
    func aServerInfoMaximumThatMakesNoSenseLeavesTheSnapshotWhole(_ shown: String) throws {
        let emulator = try Emulator(arguments: ["--query-limit-max", "7", "--info-query-limit-max", shown])
        defer { emulator.stop() }
        let created = try emulator.createArticles(40, title: "limited")
        let (keys, stderr) = try snapshotKeys(emulator)
        #expect(keys.count == 43 && Set(keys) == Set(["1", "2", "3"] + created), "\(shown): \(keys.count) lines")
        #expect(!stderr.contains("INVALID_QUERY"), "\(shown): the refusal is taken in, not retried as it is")
    }

    /// `QUERY_LIMIT_MAX=1`, said by `/server/info`: pages of one item, every item once, and the changes after the
    /// snapshot read back one activity row a request, in order.
    @Test func aLimitOfOneReadsEveryItemAndEveryChange() throws {
        let emulator = try Emulator(arguments: ["--query-limit-max", "1"])
        defer { emulator.stop() }
        let created = try emulator.createArticles(25, title: "one")
        let bridge = try BridgeProcess.run(
            config: activityConfig(url: emulator.url, pollInterval: "200ms", subscriptions: Self.subscription))
        #expect(bridge.waitForLog("snapshot done", timeout: 60), "\(bridge.stderr.suffix(3000))")
        #expect(bridge.stderr.contains("QUERY_LIMIT_MAX"))
        let before = try emulator.newestActivityID()
        try emulator.updateArticles(Array(created.prefix(10)), round: 1)
        let sentinel = try emulator.create("articles", ["title": "sentinel", "status": "published"])
        let events = try #require(bridge.events(beforeSentinel: sentinel, timeout: 30), "\(bridge.stderr.suffix(3000))")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0, "\(bridge.stderr.suffix(3000))")
        let snapshot = events.filter { $0["event"] as? String == "snapshot" }.compactMap { $0["key"] as? String }
        #expect(snapshot.count == 28 && Set(snapshot) == Set(["1", "2", "3"] + created), "\(snapshot.count) lines")
        let changes = events.filter { $0["event"] as? String == "update" }.compactMap { $0["id"] as? String }
        #expect(changes == (before + 1...before + 10).map { "act_\($0)" })
    }

    /// A refusal that names `1e+300` (and a `/server/info` that names nothing): read as 1, the digits before the
    /// exponent — pages of one item, slow but whole.
    @Test func aRefusalNamingANumberThatMakesNoSenseStillReadsEveryItem() throws {
        let emulator = try Emulator(arguments: [
            "--query-limit-max", "5", "--info-query-limit-max", "null", "--limit-refusal-names", "1e+300",
        ])
        defer { emulator.stop() }
        let created = try emulator.createArticles(20, title: "named")
        let (keys, _) = try snapshotKeys(emulator)
        #expect(keys.count == 23 && Set(keys) == Set(["1", "2", "3"] + created), "\(keys.count) lines")
    }
}
