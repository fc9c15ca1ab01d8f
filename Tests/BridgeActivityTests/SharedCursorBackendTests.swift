import BridgeEvents
import BridgeNATS
import BridgeSystem
import BridgeTestSupport
import Synchronization
import Testing

@testable import BridgeActivity

/// The shared cursors against a real nats-server: progress survives a takeover by another bridge, and the previous
/// writer's next write is fenced (a lost compare-and-set, never retried over), whatever its lease says.
@Suite(.timeLimit(.minutes(3))) struct SharedCursorBackendTests {
    /// A nats-server of its own (kept running while the test holds it), a connection and the bucket `cursors`.
    private func openBucket(_ name: String) async throws -> (NATSServer, NATSConnection, KeyValueStore) {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "shared-\(name)")
        let server = try NATSServer(name: name, in: directory)
        try await server.start()
        let connection = try await NATSConnection.connect(settings: NATSSettings(servers: [server.url]), logger: .silent)
        let store = try await KeyValueStore.open(connection: connection, settings: KeyValueSettings(bucket: "cursors"))
        return (server, connection, store)
    }

    @Test func aTakeOverFencesThePreviousWriterAndKeepsItsProgress() async throws {
        let (server, connection, store) = try await openBucket("cursor")
        defer { withExtendedLifetime(server) {} }
        let keys = SharedStateKeys(name: "orders")
        let fencedReasons = Reasons()
        let backend: @Sendable (String) -> SharedCursorBackend = { holder in
            SharedCursorBackend(store: store, keys: keys, holder: holder, logger: .silent) { reason in
                fencedReasons.value.withLock { $0.append(holder + ": " + reason) }
            }
        }
        // A sink id with characters no key may hold, and two sinks.
        let sinks = ["0-ndjson:/tmp/out file.ndjson", "1-webhook"]
        try await BlockingExecutor.shared.perform {
            let first = backend("a")
            try first.takeOver(sinks: sinks)
            let store0 = try CursorStore(backend: first, sink: sinks[0])
            #expect(store0.cursor == nil)
            try store0.startIfNew(at: 100)
            try store0.save(SubscriptionCursorState(startID: 100, snapshotWatermark: 100), for: "articles.main")
            try store0.record(ActivityProgress(resolvedIDs: [101, 102, 105], completedSnapshots: ["articles.main": 100]))
            #expect(store0.cursor == ActivityCursor(committed: 102, resolvedAbove: [105...105]))

            // Another bridge takes over: it sees the progress; the second sink adopts the one furthest behind.
            let second = backend("b")
            try second.takeOver(sinks: sinks)
            let taken0 = try CursorStore(backend: second, sink: sinks[0])
            #expect(taken0.cursor == ActivityCursor(committed: 102, resolvedAbove: [105...105]))
            #expect(
                taken0.subscriptions["articles.main"]
                    == SubscriptionCursorState(startID: 100, snapshotWatermark: 100, snapshotDone: true))
            #expect(try CursorStore(backend: second, sink: sinks[1]).cursor == taken0.cursor)

            // The first bridge's next write loses its compare-and-set: fenced, reported, and nothing written.
            #expect(throws: FencedError.self) { try store0.record(ActivityProgress(resolvedIDs: [103, 104])) }
            #expect(fencedReasons.value.withLock { $0.count } == 1)
            #expect(fencedReasons.value.withLock { $0.first?.hasPrefix("a: another bridge wrote orders.sink.") } == true)
            try taken0.record(ActivityProgress(resolvedIDs: [103]))
            let third = backend("c")
            try third.takeOver(sinks: sinks)
            #expect(try third.load(sink: sinks[0]).cursor == ActivityCursor(committed: 103, resolvedAbove: [105...105]))
        }
        await connection.close()
    }

    /// Shared state: a snapshot's resume point goes into the subscription's key with its state, fenced like the
    /// rest; the bridge that takes over resumes there, while a sink new to the bucket starts the snapshot from its
    /// first page (none of its pages is in that sink).
    @Test func aSnapshotsResumePointIsSharedAndFenced() async throws {
        let (server, connection, store) = try await openBucket("resume")
        defer { withExtendedLifetime(server) {} }
        let keys = SharedStateKeys(name: "orders")
        let backend: @Sendable (String) -> SharedCursorBackend = { holder in
            SharedCursorBackend(store: store, keys: keys, holder: holder, logger: .silent) { _ in }
        }
        try await BlockingExecutor.shared.perform {
            let first = backend("a")
            try first.takeOver(sinks: ["0-ndjson"])
            let running = try CursorStore(backend: first, sink: "0-ndjson")
            try running.startIfNew(at: 100)
            try running.save(SubscriptionCursorState(startID: 100, snapshotWatermark: 100), for: "articles")
            let position = SnapshotPosition(
                watermark: 100, after: "\"b-500\"", lines: 500, run: running.snapshotRun("articles"),
                collection: "articles")
            try running.record(ActivityProgress(snapshotPositions: ["articles": position]))

            let second = backend("b")
            try second.takeOver(sinks: ["0-ndjson", "1-webhook"])
            let resumed = try CursorStore(backend: second, sink: "0-ndjson").subscriptions["articles"]
            #expect(resumed?.snapshotAfter == "\"b-500\"" && resumed?.snapshotLines == 500, "\(String(describing: resumed))")
            let adopted = try CursorStore(backend: second, sink: "1-webhook").subscriptions["articles"]
            #expect(adopted == SubscriptionCursorState(startID: 100, snapshotWatermark: 100))
            // The first bridge's next page is fenced: its position is not written.
            let next = SnapshotPosition(
                watermark: 100, after: "\"b-999\"", lines: 1000, run: position.run, collection: "articles")
            #expect(throws: FencedError.self) {
                try running.record(ActivityProgress(snapshotPositions: ["articles": next]))
            }
            let third = backend("c")
            try third.takeOver(sinks: ["0-ndjson", "1-webhook"])
            #expect(try third.load(sink: "0-ndjson").subscriptions["articles"]?.snapshotAfter == "\"b-500\"")
        }
        await connection.close()
    }

    /// A name added to a sink that had none (docs/configuration.md, "Sink names"): the name takes the progress of its
    /// positional id (also when the entries moved in the same edit), not that of the sink furthest behind, and the
    /// positional id's cursor keys are removed.
    @Test func aNamedSinkKeepsTheProgressOfItsPositionalId() async throws {
        let (server, connection, store) = try await openBucket("names")
        defer { withExtendedLifetime(server) {} }
        let keys = SharedStateKeys(name: "orders")
        let backend: @Sendable (String) -> SharedCursorBackend = { holder in
            SharedCursorBackend(store: store, keys: keys, holder: holder, logger: .silent) { _ in }
        }
        try await BlockingExecutor.shared.perform {
            let first = backend("a")
            try first.takeOver(sinks: ["0-ndjson-a", "1-webhook-b"])
            let ahead = try CursorStore(backend: first, sink: "0-ndjson-a")
            try ahead.startIfNew(at: 100)
            try ahead.save(SubscriptionCursorState(startID: 100), for: "articles")
            try ahead.record(ActivityProgress(resolvedIDs: [101, 102]))
            try CursorStore(backend: first, sink: "1-webhook-b").startIfNew(at: 50)

            let second = backend("b")
            // Named and swapped in one edit: each name's positional id now differs from its stored one in the
            // position only.
            let renames = SinkRenames(
                formerIDs: ["hook": "0-webhook-b", "file": "1-ndjson-a"], configured: ["hook", "file"])
            try second.takeOver(sinks: ["hook", "file"], renames: renames)
            #expect(try second.load(sink: "file").cursor == ActivityCursor(committed: 102))
            #expect(try second.load(sink: "file").subscriptions == ["articles": SubscriptionCursorState(startID: 100)])
            #expect(try second.load(sink: "hook").cursor == ActivityCursor(committed: 50))
            let left = try store.keys()
            #expect(!left.contains(keys.cursor(sink: "0-ndjson-a")), "\(left)")
            #expect(!left.contains(keys.subscription(sink: "0-ndjson-a", uid: "articles")), "\(left)")
        }
        await connection.close()
    }

    @Test func damagedValuesAreDroppedRatherThanTrappedOn() {
        #expect(SharedCursorBackend.cursor(from: Array("{\"committed\":-1}".utf8)) == nil)
        #expect(SharedCursorBackend.cursor(from: Array("not json".utf8)) == nil)
        let upsideDown = SharedCursorBackend.cursor(from: Array("{\"committed\":5,\"resolved\":[[9,7],[8,8]]}".utf8))
        #expect(upsideDown == ActivityCursor(committed: 5, resolvedAbove: [8...8]))
        let unordered = SharedCursorBackend.cursor(from: Array("{\"committed\":5,\"resolved\":[[9,9],[7,7]]}".utf8))
        #expect(unordered == ActivityCursor(committed: 5))
        let cursor = ActivityCursor(committed: 7, resolvedAbove: [9...12, 20...20])
        #expect(SharedCursorBackend.cursor(from: SharedCursorBackend.value(of: cursor, holder: "h")) == cursor)
        let state = SubscriptionCursorState(startID: 3, snapshotWatermark: nil, snapshotDone: false, resyncRequested: true)
        #expect(SharedCursorBackend.subscription(from: SharedCursorBackend.value(of: state)) == state)
    }
}

/// What the fenced callbacks reported.
final class Reasons: Sendable {
    let value = Mutex<[String]>([])
}
