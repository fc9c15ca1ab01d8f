import BridgeNATS
import BridgeSystem
import BridgeTestSupport
import Testing

@testable import BridgeActivity
@testable import BridgeEvents

/// `resync` beside a running shared-state bridge: the active bridge's backend moves the request into the subscription
/// states during its term (`SharedCursorBackend.resyncRequests(stores:)`), where its readers take it as from
/// `cursor.db`, instead of ending the term for it.
@Suite(.timeLimit(.minutes(3))) struct SharedResyncDuringTermTests {
    @Test func aResyncWrittenDuringTheTermIsMovedIntoTheStatesAndKeptUntilTaken() async throws {
        let bucket = try await TestBucket.start("resync-term")
        let store = bucket.store
        let keys = SharedStateKeys(name: "orders")
        try await BlockingExecutor.shared.perform {
            let sinks = ["archive", "search-index"]
            let active = SharedCursorBackend(store: store, keys: keys, holder: "a", logger: .silent) { _ in }
            try active.takeOver(sinks: sinks)
            var stores: [String: CursorStore] = [:]
            for sink in sinks {
                let cursors = try CursorStore(backend: active, sink: sink)
                try cursors.startIfNew(at: 10)
                try cursors.save(SubscriptionCursorState(startID: 10, snapshotWatermark: 10), for: "articles")
                stores[sink] = cursors
            }
            #expect(try active.resyncRequests(stores: stores).isEmpty)

            try SharedResyncRequest.record(uid: "articles", sinks: ["search-index"], in: store, keys: keys)
            #expect(try active.resyncRequests(stores: stores) == ["search-index": ["articles"]])
            #expect(try store.entry(keys.resyncRequest(uid: "articles"))?.value == nil, "moved, not left")
            let indexed = try #require(stores["search-index"])
            // The store's own writes (the running snapshot finishing) keep the request.
            try indexed.record(ActivityProgress(resolvedIDs: [11], completedSnapshots: ["articles": 10]))
            #expect(try indexed.recordedResyncRequests() == ["articles"])
            let written = try store.entry(keys.subscription(sink: "search-index", uid: "articles"))?.value
            #expect(written.flatMap(SharedCursorBackend.subscription(from:))?.resyncRequested == true, "durable")
            #expect(try stores["archive"]?.recordedResyncRequests() == [])
            // Asked again while the reader has not taken it: still there, nothing new to move.
            #expect(try active.resyncRequests(stores: stores) == ["search-index": ["articles"]])

            // The reader takes it: the fresh state clears it.
            try indexed.save(
                SubscriptionCursorState(startID: 12, snapshotWatermark: 12),
                for: "articles",
                clearingResync: true
            )
            #expect(try active.resyncRequests(stores: stores).isEmpty)
            let next = SharedCursorBackend(store: store, keys: keys, holder: "b", logger: .silent) { _ in }
            try next.takeOver(sinks: sinks)
            #expect(
                try next.load(sink: "search-index").subscriptions["articles"]
                    == SubscriptionCursorState(startID: 12, snapshotWatermark: 12)
            )
        }
        await bucket.close()
    }
}
