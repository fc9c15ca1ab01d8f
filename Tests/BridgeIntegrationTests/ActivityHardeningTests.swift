import BridgeTestSupport
import Foundation
import Testing

extension BridgeProcess {
    /// The process's resident memory (VmRSS) in bytes, nil once it is gone.
    var residentBytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}

/// Activity mode against hostile or careless peers (issue 10): a jump of the activity id sequence, answers over the
/// REST size limit, activity rows deleted by Directus's retention job.
@Suite(.serialized) struct ActivityHardeningTests {
    @Test func aJumpOfTheActivityIdSequenceCostsNoMemoryAndLosesNoLateCommit() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let bridge = try BridgeProcess.run(config: activityConfig(url: emulator.url, pollInterval: "300ms"))
        #expect(bridge.waitUntilConnected(), "bridge did not connect: \(bridge.stderr)")
        let before = try emulator.newestActivityID()

        // A slow writer takes the next id and commits late; then the sequence is reseeded 10^12 higher and a fast
        // writer commits at once. The bridge sees a gap of 10^12 ids whose lowest id arrives later.
        try emulator.control("delay-commit", ["collection": "articles", "delay_ms": 1500])
        try emulator.control("generator", ["collection": "articles", "count": 1, "interval_ms": 0, "kind": "create"])
        try emulator.control("activity-sequence", ["jump": 1_000_000_000_000])
        let fast = try emulator.create("articles", ["title": "after the jump"])
        try emulator.waitForGenerators()
        let expected = try emulator.activityIDs(["articles"], after: before)
        #expect(expected.count == 2 && expected[1] > 1_000_000_000_000, "\(expected)")

        #expect(bridge.waitUntil { $0.events.count >= 2 }, "got \(bridge.eventIDs): \(bridge.stderr)")
        #expect(bridge.eventIDs == ["act_\(expected[1])", "act_\(expected[0])"], "the late commit arrives after")
        #expect(bridge.events.first?["key"] as? String == fast)
        // Before the fix, enumerating the gap's ids passed 300 MiB within seconds and kept growing.
        let resident = try #require(bridge.residentBytes)
        #expect(resident < 100 << 20, "resident memory \(resident >> 20) MiB")
        try emulator.create("articles", ["title": "later"])
        #expect(bridge.waitUntil { $0.events.count >= 3 }, "\(bridge.stderr)")
        #expect(bridge.residentBytes.map { $0 < 100 << 20 } ?? false)
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }

    @Test func changesOfItemsTooLargeForOneReadAreAllDeliveredInFull() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let config = activityConfig(
            url: emulator.url,
            subscriptions: "  - collection: articles",
            extra: "http:\n  listen: 127.0.0.1:0"
        )
        let first = try BridgeProcess.run(config: config)
        #expect(first.waitUntilConnected(), "\(first.stderr)")
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0)

        // While the bridge is down: 420 articles of 42 KB (a page of their activity rows with deltas, and a read of
        // their items, are over 16 MiB each), then one article of 17 MiB (over 16 MiB alone).
        let body = String(repeating: "b", count: 42_000)
        for batch in 0..<6 {
            let items = (0..<70).map { ["title": "large \(batch * 70 + $0)", "body": body] }
            try emulator.rest("POST", "/items/articles", items)
        }
        let huge = try emulator.create("articles", ["title": "huge", "body": String(repeating: "h", count: 17 << 20)])
        let expected = try emulator.activityIDs(["articles"]).map { "act_\($0)" }
        #expect(expected.count == 421)

        let second = try BridgeProcess.run(config: config, in: first.directory)
        let base = try #require(second.operationsURL(), "\(second.stderr)")
        // Before the fix the first page was cut at 16 MiB, failed to parse and was read again forever: no line.
        let lastID = Double(try emulator.newestActivityID())
        let done = second.waitUntil(timeout: 90) { _ in
            Self.metric("directus_bridge_activity_cursor", at: base) == lastID
        }
        #expect(done, "\(second.stderr.suffix(3000))")
        // 70 MB of lines: ids from each line's head, and a few lines parsed in full.
        let output = try Data(contentsOf: second.directory.appendingPathComponent("stdout.1.log"))
        let lines = output.split(separator: UInt8(ascii: "\n"))
        #expect(lines.map(Self.eventID) == expected, "every change once, in order")
        for index in [0, 210, 419] where index < lines.count {
            let event = try #require(try JSONSerialization.jsonObject(with: lines[index]) as? [String: Any])
            #expect(((event["data"] as? [String: Any])?["body"] as? String)?.utf8.count == 42_000)
            #expect(((event["delta"] as? [String: Any])?["body"] as? String)?.utf8.count == 42_000)
        }
        let lastLine = try #require(lines.last)
        let last = try #require(try JSONSerialization.jsonObject(with: lastLine) as? [String: Any])
        #expect(last["key"] as? String == huge)
        #expect(((last["data"] as? [String: Any])?["body"] as? String)?.utf8.count == 17 << 20, "read alone, in full")
        #expect(((last["delta"] as? [String: Any])?["body"] as? String)?.utf8.count == 17 << 20)
        #expect(!second.stderr.contains(" ERROR "), "nothing was left out: \(second.stderr.suffix(2000))")

        let metrics = try ParsedMetrics(parsing: try HTTPFetch.get(base + "/metrics").text)
        #expect((metrics.value("directus_bridge_activity_oversized_answers_total") ?? 0) >= 2)
        #expect(metrics.value("directus_bridge_activity_omitted_for_size_total") == 0)
        second.send(SIGTERM)
        #expect(second.waitForExit() == 0)
    }

    @Test func rowsLostToRetentionAreReportedAndSnapshotSubscriptionsSnapshotAgain() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let config = activityConfig(
            url: emulator.url,
            pollInterval: "300ms",
            subscriptions: "  - collection: articles\n    snapshot: true\n  - collection: comments",
            extra: "http:\n  listen: 127.0.0.1:0"
        )
        let first = try BridgeProcess.run(config: config)
        #expect(first.waitForLog("snapshot done"), "\(first.stderr)")
        #expect(first.waitUntil { $0.events.count == 3 }, "the seed's three articles: \(first.stderr)")
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0)

        // While the bridge is stopped: changes, then the retention job deletes the first of them.
        let before = try emulator.newestActivityID()
        let lostArticle = try emulator.create("articles", ["title": "lost"])
        try emulator.rest("PATCH", "/items/articles/1", ["title": "changed while stopped"])
        try emulator.create("comments", ["text": "lost comment", "article": 1])
        let keptFrom = try emulator.newestActivityID() + 1
        let keptArticle = try emulator.create("articles", ["title": "kept"])
        let keptComment = try emulator.create("comments", ["text": "kept comment", "article": 1])
        try emulator.control("retention", ["before_id": keptFrom])
        let keptArticleRow = try #require(try emulator.activityIDs(["articles"]).last)
        let keptCommentRow = try #require(try emulator.activityIDs(["comments"]).last)

        // `check` says so while the cursor needs the deleted rows.
        let range = "activity rows \(before + 1)-\(keptFrom - 1)"
        let failing = try Self.check(in: first.directory)
        #expect(failing.code == 1)
        let line = failing.lines.first { $0.hasPrefix("FAIL activity retention:") }
        #expect(line?.contains(range) == true, "\(failing.lines)")

        // The rows still there arrive at once; the missing ids are gaps until the gap timeout (30 s) gives them up
        // as lost, since they lie below the oldest row left.
        let second = try BridgeProcess.run(config: config, in: first.directory)
        let stillThere = ["act_\(keptArticleRow)", "act_\(keptCommentRow)"]
        #expect(second.waitUntil { $0.eventIDs == stillThere }, "\(second.stderr)")
        #expect(second.waitForLog("activity rows were lost to retention", timeout: 60), "\(second.stderr)")
        let report = second.stderr.split(separator: "\n").first { $0.contains("lost to retention") } ?? ""
        #expect(report.contains(" ERROR "))
        #expect(report.contains("activity.lost_from=\(before + 1)"))
        #expect(report.contains("activity.lost_to=\(keptFrom - 1)"))
        // Then every article's current state arrives as a snapshot; comments go on from the oldest row still there.
        let snapshotKeys = { (bridge: BridgeProcess) in
            bridge.events.filter { $0["event"] as? String == "snapshot" }.compactMap { $0["key"] as? String }
        }
        #expect(second.waitUntil { snapshotKeys($0).count >= 5 }, "\(second.stderr)")
        #expect(Set(snapshotKeys(second)) == ["1", "2", "3", lostArticle, keptArticle])
        let changed = second.events.first { $0["event"] as? String == "snapshot" && $0["key"] as? String == "1" }
        #expect((changed?["data"] as? [String: Any])?["title"] as? String == "changed while stopped")
        let sentinel = try emulator.create("comments", ["text": "sentinel", "article": 1])
        let streamed = try #require(second.events(beforeSentinel: sentinel, in: "comments"), "\(second.stderr)")
            .filter { $0["event"] as? String != "snapshot" }
        #expect(streamed.compactMap { $0["id"] as? String } == stillThere)
        #expect(streamed.last?["key"] as? String == keptComment)

        let base = try #require(second.operationsURL(), "\(second.stderr)")
        #expect(Self.metric("directus_bridge_activity_retention_lost_total", at: base) == Double(keptFrom - 1 - before))
        // Once the bridge has moved its cursor past the loss, `check` is satisfied again.
        let moved = second.waitUntil { _ in
            (Self.metric("directus_bridge_activity_cursor", at: base) ?? 0) >= Double(keptCommentRow)
        }
        #expect(moved)
        let passing = try Self.check(in: first.directory)
        #expect(passing.lines.contains { $0.hasPrefix("ok   activity retention:") }, "\(passing.lines)")
        second.send(SIGTERM)
        #expect(second.waitForExit() == 0)
    }

    /// Runs `directus-bridge check` with the `bridge.yaml` in `directory`.
    static func check(in directory: URL) throws -> (code: Int32?, lines: [String]) {
        let process = try BridgeProcess(arguments: ["check", "--config", "bridge.yaml"], directory: directory)
        let code = process.waitForExit(timeout: 30)
        return (code, process.lines)
    }

    /// The `id` of an event line, from its head (`{"id":"act_7",…`).
    static func eventID(_ line: Data.SubSequence) -> String {
        let head = String(decoding: line.prefix(64), as: UTF8.self)
        guard head.hasPrefix(#"{"id":""#) else { return "" }
        return String(head.dropFirst(7).prefix { $0 != "\"" })
    }

    /// The value of an unlabelled sample in the bridge's `/metrics` at `base` (nil when unreachable or absent).
    static func metric(_ name: String, at base: String) -> Double? {
        guard let text = try? HTTPFetch.get(base + "/metrics").text else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }
}
