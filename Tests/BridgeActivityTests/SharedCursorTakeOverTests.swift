import BridgeEvents
import BridgeNATS
import BridgeSystem
import BridgeTestSupport
import Testing

@testable import BridgeActivity

/// The takeover brings the bucket to the configured sinks as `CursorDatabase` brings its file, and takes `resync`
/// requests written beside the bridges, against a real nats-server.
@Suite(.timeLimit(.minutes(3))) struct SharedCursorTakeOverTests {
    /// A sink whose id changed (a new URL) starts from the progress of the sink it replaces — cursor and snapshot
    /// states — instead of the newest activity id; the old sink's keys are deleted, and a bridge still writing them
    /// is fenced.
    @Test func aSinkNoLongerConfiguredHandsItsProgressOnAndIsRemoved() async throws {
        let bucket = try await TestBucket.start("renamed")
        let store = bucket.store
        let keys = SharedStateKeys(name: "orders")
        let fenced = Reasons()
        try await BlockingExecutor.shared.perform {
            let first = SharedCursorBackend(store: store, keys: keys, holder: "a", logger: .silent) { reason in
                fenced.value.withLock { $0.append(reason) }
            }
            try first.takeOver(sinks: ["old"])
            let old = try CursorStore(backend: first, sink: "old")
            try old.startIfNew(at: 50)
            try old.save(SubscriptionCursorState(startID: 50, snapshotWatermark: 50), for: "articles")
            try old.record(ActivityProgress(resolvedIDs: [51, 52], completedSnapshots: ["articles": 50]))

            let second = SharedCursorBackend(store: store, keys: keys, holder: "b", logger: .silent) { _ in }
            try second.takeOver(sinks: ["new"])
            let new = try CursorStore(backend: second, sink: "new")
            #expect(new.cursor == ActivityCursor(committed: 52))
            #expect(
                new.subscriptions["articles"]
                    == SubscriptionCursorState(startID: 50, snapshotWatermark: 50, snapshotDone: true))
            #expect(try store.entry(keys.cursor(sink: "old"))?.value == nil)
            #expect(try store.entry(keys.subscription(sink: "old", uid: "articles"))?.value == nil)
            #expect(try store.entry(keys.cursor(sink: "new"))?.value != nil)
            #expect(throws: FencedError.self) { try old.record(ActivityProgress(resolvedIDs: [53])) }
            #expect(fenced.value.withLock { $0.count } == 1)
            // The new sink's progress is kept at the next takeover; nothing of the old one comes back.
            let third = SharedCursorBackend(store: store, keys: keys, holder: "c", logger: .silent) { _ in }
            try third.takeOver(sinks: ["new"])
            #expect(try third.load(sink: "new").cursor == ActivityCursor(committed: 52))
            #expect(try store.entry(keys.cursor(sink: "old"))?.value == nil)
            // Configured again: its deleted keys (delete markers now) are written anew, without a false fence.
            let fourth = SharedCursorBackend(store: store, keys: keys, holder: "d", logger: .silent) { reason in
                fenced.value.withLock { $0.append(reason) }
            }
            try fourth.takeOver(sinks: ["old", "new"])
            let again = try CursorStore(backend: fourth, sink: "old")
            #expect(again.cursor == ActivityCursor(committed: 52))
            // A subscription key a removal left as a delete marker, which no takeover lists.
            let comments = keys.subscription(sink: "old", uid: "comments")
            try store.delete(comments, expecting: try store.update(comments, value: Array("{}".utf8), expecting: 0))
            try again.save(SubscriptionCursorState(startID: 60), for: "comments")
            try again.record(ActivityProgress(resolvedIDs: [53]))
            #expect(fenced.value.withLock { $0.count } == 1)
        }
        await bucket.close()
    }

    /// A first bridge took the bucket over and started each of `sinks` at activity id 10 with `articles`.
    private static func startedAt10(_ sinks: [String], store: KeyValueStore, keys: SharedStateKeys) throws {
        let first = SharedCursorBackend(store: store, keys: keys, holder: "a", logger: .silent) { _ in }
        try first.takeOver(sinks: sinks)
        for sink in sinks {
            let cursors = try CursorStore(backend: first, sink: sink)
            try cursors.startIfNew(at: 10)
            try cursors.save(SubscriptionCursorState(startID: 10), for: "articles")
        }
    }

    /// `resync` beside shared-state bridges: the request waits in its own key until the next takeover, which sets it
    /// on the subscription of every sink and deletes the request.
    @Test func aResyncRequestIsTakenByTheNextTakeOver() async throws {
        let bucket = try await TestBucket.start("resync")
        let store = bucket.store
        let keys = SharedStateKeys(name: "orders")
        try await BlockingExecutor.shared.perform {
            let sinks = ["0-ndjson", "1-webhook"]
            try Self.startedAt10(sinks, store: store, keys: keys)
            try SharedResyncRequest.record(uid: "articles", in: store, keys: keys)
            // Written beside the active bridge into a key of its own: the subscription states are untouched.
            let written = try store.entry(keys.subscription(sink: sinks[0], uid: "articles"))?.value
            #expect(written.flatMap(SharedCursorBackend.subscription(from:))?.resyncRequested == false)

            let second = SharedCursorBackend(store: store, keys: keys, holder: "b", logger: .silent) { _ in }
            try second.takeOver(sinks: sinks)
            for sink in sinks {
                #expect(try second.load(sink: sink).subscriptions["articles"]?.resyncRequested == true)
            }
            #expect(try store.entry(keys.resyncRequest(uid: "articles"))?.value == nil)
            // Durable in the subscription states: a takeover before any reader acted on it still has it.
            let third = SharedCursorBackend(store: store, keys: keys, holder: "c", logger: .silent) { _ in }
            try third.takeOver(sinks: sinks)
            #expect(try third.load(sink: sinks[1]).subscriptions["articles"]?.resyncRequested == true)
        }
        await bucket.close()
    }

    /// `resync UID --sink NAME` with shared state: the request names its sink, and the takeover sets it on that
    /// sink's subscription alone.
    @Test func aResyncRequestForOneSinkReachesThatSinkOnly() async throws {
        let bucket = try await TestBucket.start("resync-one")
        let store = bucket.store
        let keys = SharedStateKeys(name: "orders")
        try await BlockingExecutor.shared.perform {
            let sinks = ["archive", "search-index"]
            try Self.startedAt10(sinks, store: store, keys: keys)
            try SharedResyncRequest.record(uid: "articles", sinks: ["search-index"], in: store, keys: keys)
            let second = SharedCursorBackend(store: store, keys: keys, holder: "b", logger: .silent) { _ in }
            try second.takeOver(sinks: sinks)
            #expect(try second.load(sink: "search-index").subscriptions["articles"]?.resyncRequested == true)
            #expect(try second.load(sink: "archive").subscriptions["articles"]?.resyncRequested == false)
            #expect(try store.entry(keys.resyncRequest(uid: "articles"))?.value == nil)
        }
        await bucket.close()
    }
}
