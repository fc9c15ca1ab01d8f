import BridgeTestSupport
import Foundation
import Testing

/// An operator points a subscription's `uid` at another collection in bridge.yaml between two runs (docs/RELIABILITY.md,
/// "A subscription moved to another collection"). Before: the second run sent none of the new collection's items — the
/// state kept under the uid said its snapshot was done — and said nothing. Real binary, emulator, activity mode.
@Suite(.serialized) struct SubscriptionMovedEndToEndTests {
    @Test func aUIDMovedToAnotherCollectionIsSnapshottedThereAsANewSubscription() throws {
        let emulator = try Emulator()
        defer { emulator.stop() }
        let onComments = activityConfig(
            url: emulator.url, pollInterval: "300ms",
            subscriptions: "  - uid: feed\n    collection: comments\n    snapshot: true")
        let first = try BridgeProcess.run(config: onComments)
        #expect(first.waitForLog("snapshot done", timeout: 30), "\(first.stderr.suffix(3000))")
        first.send(SIGTERM)
        #expect(first.waitForExit() == 0, "\(first.stderr.suffix(3000))")
        #expect(first.events.contains { $0["collection"] as? String == "comments" })

        // The same uid, now on articles: `status` says it has not started (the next start begins it afresh).
        let onArticles = activityConfig(
            url: emulator.url, pollInterval: "300ms",
            subscriptions: "  - uid: feed\n    collection: articles\n    snapshot: true")
        try onArticles.write(
            to: first.directory.appendingPathComponent("bridge.yaml"), atomically: true, encoding: .utf8)
        let status = try BridgeProcess(arguments: ["status", "--config", "bridge.yaml"], directory: first.directory)
        #expect(status.waitForExit() == 0, "\(status.stderr)")
        let line = status.lines.first { $0.hasPrefix("subscription  feed") } ?? "\(status.lines)"
        #expect(line.contains("not started yet") && !line.contains("snapshot done"), "\(line)")

        let second = try BridgeProcess.run(config: onArticles, in: first.directory)
        #expect(second.waitForLog("snapshot done", timeout: 30), "\(second.stderr.suffix(3000))")
        second.send(SIGTERM)
        #expect(second.waitForExit() == 0, "\(second.stderr.suffix(3000))")
        #expect(
            second.stderr.contains("the subscription now reads another collection than its saved state was made for"),
            "\(second.stderr.suffix(3000))")
        let snapshotted = Set(
            second.events.filter { $0["event"] as? String == "snapshot" && $0["collection"] as? String == "articles" }
                .compactMap { $0["key"] as? String })
        let articles = try emulator.keys(of: "articles")
        #expect(!articles.isEmpty)
        #expect(snapshotted == articles, "\(articles.subtracting(snapshotted).count) of \(articles.count) missing")
    }
}
