import BridgeTestSupport
import Foundation
import Testing

/// Reads of fewer rows than the bridge's pages (500): Directus with `QUERY_LIMIT_MAX` below it, and a server that
/// answers fewer rows than asked while more are there (a gateway or an extension in front of Directus that caps page
/// sizes: the emulator's `limit_cap` setting). Both failed against the release binary of main at 94ea0c4 (operator3
/// in docs/RELIABILITY.md): the first never read a page ("reading the snapshot failed … HTTP 400 INVALID_QUERY …
/// \"limit\" must be less than or equal to 100", forever, nothing delivered); the second took the first short page
/// for the last one, and a snapshot of 50,003 items held 100 lines and said "snapshot done".
@Suite(.serialized) struct AnswerCapTests {
    @Test func directusWithAQueryLimitMaxBelowThePageSizeDeliversTheSnapshotAndEveryChange() throws {
        let emulator = try Emulator(arguments: ["--query-limit-max", "100"])
        defer { emulator.stop() }
        let created = try emulator.createArticles(1_200, title: "limited")
        let subscription = "  - collection: articles\n    snapshot: true"
        let bridge = try BridgeProcess.run(
            config: activityConfig(url: emulator.url, pollInterval: "300ms", subscriptions: subscription))
        #expect(bridge.waitForLog("snapshot done", timeout: 30), "\(bridge.stderr)")
        #expect(bridge.stderr.contains("QUERY_LIMIT_MAX"), "the limit is said once")
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        // 300 changes while it is stopped: read back in pages of at most 100 rows.
        let before = try emulator.newestActivityID()
        try emulator.updateArticles(Array(created.prefix(300)), round: 1)
        let changes = (before + 1...before + 300).map { "act_\($0)" }  // one activity row each, nobody else writes
        #expect(try emulator.newestActivityID() == before + 300)
        let again = try BridgeProcess.run(
            config: activityConfig(url: emulator.url, pollInterval: "300ms", subscriptions: subscription),
            in: bridge.directory)
        let sentinel = try emulator.create("articles", ["title": "sentinel", "status": "published"])
        let events = try #require(again.events(beforeSentinel: sentinel, timeout: 30), "\(again.stderr)")
        let all = bridge.events + events
        let snapshot = all.filter { $0["event"] as? String == "snapshot" }.compactMap { $0["key"] as? String }
        #expect(snapshot.count == 1_203, "\(snapshot.count) snapshot lines")
        #expect(Set(snapshot) == Set(["1", "2", "3"] + created))
        #expect(events.compactMap { $0["id"] as? String } == Array(changes), "every change once, in order")
        #expect(!(bridge.stderr + again.stderr).contains("INVALID_QUERY"))
        again.send(SIGTERM)
        #expect(again.waitForExit() == 0)
    }

    @Test func aServerThatCutsEveryAnswerShortLosesNoSnapshotItem() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let created = try emulator.createArticles(1_200, title: "capped")
        _ = try emulator.control("settings", ["limit_cap": 100])
        let bridge = try BridgeProcess.run(
            config: activityConfig(
                url: emulator.url, pollInterval: "300ms", subscriptions: "  - collection: articles\n    snapshot: true")
        )
        #expect(bridge.waitForLog("snapshot done", timeout: 30), "\(bridge.stderr)")
        let sentinel = try emulator.create("articles", ["title": "sentinel", "status": "published"])
        let events = try #require(bridge.events(beforeSentinel: sentinel, timeout: 20), "\(bridge.stderr)")
        let snapshot = events.filter { $0["event"] as? String == "snapshot" }.compactMap { $0["key"] as? String }
        // The three seeded articles and the 1,200 created before the start, each once.
        #expect(snapshot.count == 1_203, "\(snapshot.count) snapshot lines")
        #expect(Set(snapshot) == Set(["1", "2", "3"] + created))
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
