@testable import BridgeNATS
import BridgeSystem
import BridgeTestSupport
import Foundation
import Synchronization
import Testing

/// The key-value client against real nats-server processes: compare-and-set semantics, delete markers, listing,
/// and a bucket replicated over a three-node cluster that survives a node.
@Suite(.timeLimit(.minutes(5)))
struct KeyValueStoreTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func writesAreCompareAndSetOnTheRevision() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "nats-kv")
        let server = try NATSServer(name: "kv", in: directory)
        try await server.start()
        let connection = try await NATSConnection.connect(settings: NATSSettings(servers: [server.url]), logger: .silent)
        let settings = KeyValueSettings(bucket: "state_test")
        let store = try await KeyValueStore.open(connection: connection, settings: settings)

        try await BlockingExecutor.shared.perform {
            #expect(try store.entry("a.cursor") == nil)
            let first = try store.create("a.cursor", value: self.bytes("1"))
            #expect(try store.entry("a.cursor") == KeyValueEntry(value: self.bytes("1"), revision: first))
            // Creating again fails: the key has a value.
            #expect(throws: NATSError.self) { try store.create("a.cursor", value: self.bytes("x")) }
            #expect(Self.kind { try store.create("a.cursor", value: self.bytes("x")) } == .conflict)

            let second = try store.update("a.cursor", value: self.bytes("2"), expecting: first)
            #expect(second > first)
            // A writer still expecting the first revision has lost: a conflict, and the value is untouched.
            #expect(Self.kind { try store.update("a.cursor", value: self.bytes("stale"), expecting: first) } == .conflict)
            #expect(try store.entry("a.cursor")?.value == self.bytes("2"))

            // A delete is a marker with a revision; a create over it expects that revision.
            let marker = try store.delete("a.cursor", expecting: second)
            #expect(try store.entry("a.cursor") == KeyValueEntry(value: nil, revision: marker))
            #expect(Self.kind { try store.create("a.cursor", value: self.bytes("3")) } == .conflict)
            let third = try store.create("a.cursor", value: self.bytes("3"), overMarker: marker)
            #expect(try store.entry("a.cursor")?.revision == third)

            _ = try store.create("b.lease", value: self.bytes("holder"))
            #expect(Set(try store.keys()) == ["a.cursor", "b.lease"])
            try store.purge("b.lease")
            #expect(try store.keys() == ["a.cursor"])
            #expect(try store.entry("b.lease")?.value == nil)

            #expect(Self.kind { try store.entry("bad..key") } == .rejected)
            #expect(Self.kind { try store.update(".x", value: [], expecting: 1) } == .rejected)
        }
        // A second bridge binds the existing bucket and sees the same state.
        let other = try await KeyValueStore.open(connection: connection, settings: settings)
        #expect(try await BlockingExecutor.shared.perform { try other.entry("a.cursor")?.value } == bytes("3"))
        await connection.close()
    }

    /// A bucket someone made with a TTL, or with a byte limit that discards old values, would let a cursor or the
    /// lease vanish: binding it is a configuration error naming why (before, the bridge bound it and ran).
    @Test func aBucketThatExpiresOrDiscardsKeysIsRefused() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "nats-kv-limits")
        let server = try NATSServer(name: "limits", in: directory)
        try await server.start()
        for (bucket, arguments, reason) in [
            ("expiring", ["--ttl", "60"], "expires its keys after 60 s"),
            ("discarding", ["--max-bytes", "1000000"], "throws its oldest values away"),
        ] {
            let made = try await natsAdmin(["create-bucket", server.url, bucket] + arguments)
            try #require(made.status == 0, "\(made.stderr)")
            let connection = try await NATSConnection.connect(
                settings: NATSSettings(servers: [server.url]), logger: .silent)
            do {
                _ = try await KeyValueStore.open(connection: connection, settings: KeyValueSettings(bucket: bucket))
                Issue.record("bucket \(bucket) was bound")
            } catch let error as NATSError {
                #expect(error.kind == .configuration && error.message.contains(reason), "\(error)")
            }
            await connection.close()
        }
    }

    @Test func theBucketRuleReadsTheServersNumbersWithoutTrusting() {
        #expect(KeyValueBucketLimits.problem(maxAge: 0, discardOld: true, maxMessages: -1, maxBytes: -1) == nil)
        #expect(KeyValueBucketLimits.problem(maxAge: -5, discardOld: false, maxMessages: 10, maxBytes: 10) == nil)
        #expect(KeyValueBucketLimits.problem(maxAge: .max, discardOld: false, maxMessages: 0, maxBytes: 0) != nil)
        #expect(KeyValueBucketLimits.problem(maxAge: 0, discardOld: true, maxMessages: 0, maxBytes: .max) != nil)
    }

    @Test func ofTwoWritersRacingOnOneRevisionExactlyOneSucceeds() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "nats-kv")
        let server = try NATSServer(name: "race", in: directory)
        try await server.start()
        // Two connections: two bridges.
        let connections = [
            try await NATSConnection.connect(settings: NATSSettings(servers: [server.url]), logger: .silent),
            try await NATSConnection.connect(settings: NATSSettings(servers: [server.url]), logger: .silent),
        ]
        let settings = KeyValueSettings(bucket: "race")
        let stores = [
            try await KeyValueStore.open(connection: connections[0], settings: settings),
            try await KeyValueStore.open(connection: connections[1], settings: settings),
        ]
        var revision = try await BlockingExecutor.shared.perform { try stores[0].create("lease", value: [0]) }
        for round in 1...20 {
            let expected = revision
            let outcomes = await withTaskGroup(of: (Int, Result<UInt64, NATSError>).self) { group in
                for (index, store) in stores.enumerated() {
                    group.addTask {
                        (index, await Self.attempt { try store.update("lease", value: [UInt8(index), UInt8(round)], expecting: expected) })
                    }
                }
                return await group.reduce(into: [(Int, Result<UInt64, NATSError>)]()) { $0.append($1) }
            }
            let winners = outcomes.compactMap { index, result in (try? result.get()).map { (index, $0) } }
            let losers = outcomes.compactMap { _, result -> NATSError.Kind? in
                if case .failure(let error) = result { return error.kind }
                return nil
            }
            try #require(winners.count == 1, "round \(round): \(outcomes)")
            #expect(losers == [.conflict], "round \(round)")
            let stored = try await BlockingExecutor.shared.perform { try stores[1].entry("lease") }
            #expect(stored == KeyValueEntry(value: [UInt8(winners[0].0), UInt8(round)], revision: winners[0].1))
            revision = winners[0].1
        }
        for connection in connections { await connection.close() }
    }

    @Test func aReplicatedBucketKeepsItsStateWhenANodeDies() async throws {
        let directory = try TestEnvironment.makeTemporaryDirectory(prefix: "nats-kv-cluster")
        let servers = try await NATSServer.cluster(in: directory)
        let connection = try await NATSConnection.connect(
            settings: NATSSettings(servers: servers.map(\.url)), logger: .silent)
        let settings = KeyValueSettings(bucket: "replicated", replicas: 3)
        // The cluster elects its meta leader after start: binding is retried like the bridge does.
        var opened: KeyValueStore?
        let deadline = ContinuousClock.now + .seconds(60)
        while opened == nil {
            do {
                opened = try await KeyValueStore.open(connection: connection, settings: settings)
            } catch let error as NATSError where error.kind == .retriable && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        let store = try #require(opened)
        let written = try await eventually { try store.create("cursor", value: [42]) }
        try await servers[0].kill()
        let read = try await eventually { try store.entry("cursor") }
        #expect(read == KeyValueEntry(value: [42], revision: written))
        let next = try await eventually { try store.update("cursor", value: [43], expecting: written) }
        #expect(next > written)
        await connection.close()
    }

    @Test func tokensAreValidKeysAndDistinct() {
        let texts = ["", "=", ".", "a.b", "a=2Eb", "ndjson:/tmp/out file.ndjson", "Ü", "a-b_C9", "..", "="]
        let tokens = texts.map(KeyValueKey.token)
        for token in tokens { #expect(KeyValueKey.isValid("x." + token + ".y"), "\(token)") }
        #expect(Set(tokens).count == Set(texts).count)
        #expect(KeyValueKey.token("a-b_C9") == "a-b_C9")
        #expect(!KeyValueKey.isValid("a..b") && !KeyValueKey.isValid("a.") && !KeyValueKey.isValid("a b"))
        #expect(KeyValueSettings.isValidBucket("directus_bridge") && !KeyValueSettings.isValidBucket("a.b"))
    }

    private static func kind(_ body: () throws -> Void) -> NATSError.Kind? {
        do {
            try body()
            return nil
        } catch let error as NATSError {
            return error.kind
        } catch {
            return nil
        }
    }

    /// `body` on the blocking executor, its error as a `NATSError`.
    private static func attempt(_ body: @escaping @Sendable () throws -> UInt64) async -> Result<UInt64, NATSError> {
        do {
            return .success(try await BlockingExecutor.shared.perform(body))
        } catch let error as NATSError {
            return .failure(error)
        } catch {
            return .failure(NATSError(kind: .retriable, message: "\(error)"))
        }
    }

    /// Runs `body` on the blocking executor until it stops failing as retriable (a cluster electing leaders).
    private func eventually<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            do {
                return try await BlockingExecutor.shared.perform(body)
            } catch let error as NATSError where error.kind == .retriable && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }
}
