import BridgeTestSupport
import Foundation
import Testing

/// Event ids end to end (README.md "Event ids"): unique per sink when two subscriptions
/// cover one collection, and safe in the `webhook-id` header whatever a key holds.
@Suite(.serialized) struct EventIDEndToEndTests {
    /// Activity mode, `subscriptions` (YAML lines), one NDJSON sink on stdout and one signed webhook sink.
    private func config(url: String, hook: String, subscriptions: String) -> String {
        """
        directus:
          url: \(url)
          auth:
            token: admin-static-token
          heartbeat: 2s
          reconnect:
            initial_delay: 100ms
            max_delay: 500ms
        subscriptions:
        \(subscriptions)
        delivery:
          mode: activity
          poll_interval: 300ms
          state_dir: ./state
        sinks:
          - type: ndjson
            path: "-"
          - type: webhook
            url: \(hook)
            secret: raw-secret
        log:
          level: debug
        shutdown_timeout: 5s
        """
    }

    @Test func twoSubscriptionsOnOneCollectionDeliverBothEventsToOneWebhook() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.setSecrets(["/hook": [["raw": "raw-secret"]]])
        let subscriptions = """
              - collection: articles
              - collection: articles
                uid: articles_titles
                query:
                  fields: [id, title]
            """
        let bridge = try BridgeProcess.run(
            config: config(url: emulator.url, hook: receiver.hookURL(), subscriptions: subscriptions))
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        let key = try emulator.create("articles", ["title": "twice"])
        let activity = try #require(try emulator.activityIDs(["articles"]).last)

        #expect(bridge.waitUntil { _ in ((try? receiver.delivered().count) ?? 0) >= 2 }, "\(bridge.stderr)")
        let delivered = try receiver.delivered()
        #expect(Set(delivered.map(\.id)) == ["act_\(activity)", "act_\(activity)_articles%5Ftitles"])
        #expect(Set(delivered.compactMap { $0.json["subscription"] as? String }) == ["articles", "articles_titles"])
        #expect(delivered.allSatisfy { $0.json["key"] as? String == key && $0.json["id"] as? String == $0.id })
        #expect(delivered.allSatisfy { $0.verified.first as? Bool == true })
        #expect(bridge.events.compactMap { $0["id"] as? String }.sorted() == delivered.map(\.id).sorted())
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
        #expect(!bridge.stderr.contains("event id already taken"))
    }

    @Test func snapshotIdsOfKeysWithLineBreaksAndUnderscoresAreDistinctAndHeaderSafe() throws {
        let emulator = try Emulator()
        let receiver = try WebhookReceiver()
        defer {
            emulator.stop()
            receiver.stop()
        }
        try receiver.setSecrets(["/hook": [["raw": "raw-secret"]]])
        let slugs = ["a\r\nx-injected: 1", "a_b", "a%5Fb", "ü"]
        for slug in slugs { try emulator.rest("POST", "/items/tags", ["slug": slug, "label": "odd"]) }
        let bridge = try BridgeProcess.run(
            config: config(
                url: emulator.url, hook: receiver.hookURL(),
                subscriptions: "  - collection: tags\n    snapshot: true\n    query:\n      filter: { label: { _eq: odd } }"
            ))
        #expect(bridge.waitUntil { _ in ((try? receiver.delivered().count) ?? 0) >= slugs.count }, "\(bridge.stderr)")
        // A change after the snapshot, once the socket is up: the sink delivers in order, so a duplicate comes
        // before its request.
        #expect(bridge.waitUntilConnected(), "\(bridge.stderr)")
        try emulator.rest("POST", "/items/tags", ["slug": "sentinel", "label": "odd"])
        let delivered = try #require(try receiver.requests(beforeSentinel: "sentinel"), "\(bridge.stderr)")
            .filter(\.delivered)
        #expect(Set(delivered.compactMap { $0.json["key"] as? String }) == Set(slugs))
        #expect(Set(delivered.map(\.id)).count == slugs.count)
        for request in delivered {
            #expect(request.id == request.json["id"] as? String, "webhook-id is the event id")
            #expect(request.id.utf8.allSatisfy { (0x21...0x7E).contains($0) }, "\(request.id)")
            #expect(request.headers["x-injected"] == nil)
            #expect(request.verified.first as? Bool == true)
        }
        #expect(delivered.contains { $0.id.hasPrefix("snap_tags_a%0D%0Ax-injected%3A%201_") })
        bridge.send(SIGTERM)
        #expect(bridge.waitForExit() == 0)
    }
}
