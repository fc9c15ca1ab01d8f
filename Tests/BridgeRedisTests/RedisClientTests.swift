import BridgeRedis
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// The Redis client against Debian's redis-server started by the test, read back with redis-py.
@Suite(.timeLimit(.minutes(5)))
struct RedisClientTests {
    @Test func entriesAreAppendedOnceInOrderWithTheirFields() async throws {
        let server = try await startedRedis()
        let client = RedisClient(settings: try RedisSettings(url: server.url(), maxInFlight: 64))
        let entries = redisEntries(count: 1_000, items: 30)
        let outcomes = try await client.append(entries, settings: RedisStreamSettings())
        #expect(outcomes.allSatisfy { if case .appended = $0 { true } else { false } })
        expectStored(try await readStream(server, "directus.articles"), exactly: entries)

        // The same events again (a re-send after a crash): the window knows every id, nothing is appended.
        let again = try await client.append(Array(entries[500...]), settings: RedisStreamSettings())
        #expect(again.allSatisfy { if case .duplicate = $0 { true } else { false } })
        #expect(try await readStream(server, "directus.articles").count == 1_000)
        client.close()
    }

    @Test func withoutTheWindowAndWithTrimming() async throws {
        let server = try await startedRedis()
        let client = RedisClient(settings: try RedisSettings(url: server.url()))
        let entries = redisEntries(count: 3_000, items: 5, stream: "trimmed")
        let settings = RedisStreamSettings(maxLength: 100, dedupWindow: .zero)
        let outcomes = try await client.append(entries, settings: settings)
        #expect(outcomes.allSatisfy { $0.isStored })
        let stored = try await readStream(server, "trimmed")
        // MAXLEN ~ trims whole macro nodes only: at least 100 are kept, far fewer than 3,000.
        #expect(stored.count >= 100 && stored.count < 1_000, "\(stored.count) kept")
        #expect(stored.last?.fields["id"] == entries.last?.dedupID)
        // Trimming through the script too.
        let scripted = try await client.append(
            redisEntries(count: 2_000, items: 5, stream: "trimmed-dedup"),
            settings: RedisStreamSettings(maxLength: 100)
        )
        #expect(scripted.allSatisfy { $0.isStored })
        #expect(try await readStream(server, "trimmed-dedup").count < 1_000)
    }

    @Test func anEntryTheServerRefusesIsRejectedAloneAndTheRestAppended() async throws {
        let server = try await startedRedis()
        let client = RedisClient(settings: try RedisSettings(url: server.url()))
        var setup = RedisCommands()
        setup.command("SET", "not-a-stream", "x")
        #expect(try await client.pipeline(setup) == [.status("OK")])
        var entries = redisEntries(count: 4, items: 4)
        entries[2].stream = "not-a-stream"
        let outcomes = try await client.append(entries, settings: RedisStreamSettings())
        #expect(outcomes.map(\.isStored) == [true, true, false, true])
        if case .rejected(let error) = outcomes[2] { #expect(error.message.contains("WRONGTYPE")) }
        // Refused before anything was marked: once the key is a stream, the same event is appended.
        setup = RedisCommands()
        setup.command("DEL", "not-a-stream")
        _ = try await client.pipeline(setup)
        #expect(try await client.append([entries[2]], settings: RedisStreamSettings()).map(\.isStored) == [true])
    }

    @Test func aFlushedScriptCacheIsLoadedAgain() async throws {
        let server = try await startedRedis()
        let client = RedisClient(settings: try RedisSettings(url: server.url()))
        let first = redisEntries(count: 10, items: 2, prefix: "a")
        #expect(try await client.append(first, settings: RedisStreamSettings()).allSatisfy { $0.isStored })
        var flush = RedisCommands()
        flush.command("SCRIPT", "FLUSH")
        _ = try await client.pipeline(flush)
        let second = redisEntries(count: 10, items: 2, prefix: "b")
        #expect(try await client.append(second, settings: RedisStreamSettings()).allSatisfy { $0.isStored })
        expectStored(try await readStream(server, "directus.articles"), exactly: first + second)
    }

    @Test func aServerRestartMidStreamLosesNothingAndDuplicatesNothing() async throws {
        let server = try await startedRedis()
        let client = RedisClient(settings: try RedisSettings(url: server.url(), replyTimeout: .seconds(5)))
        let entries = redisEntries(count: 6_000, items: 50)
        var next = 0
        var failures = 0
        var restarted = false
        while next < entries.count {
            let batch = Array(entries[next..<min(entries.count, next + 500)])
            if next >= 2_000 && !restarted {
                restarted = true
                try await server.kill()
                try await server.start()
            }
            do {
                let outcomes = try await client.append(batch, settings: RedisStreamSettings())
                #expect(outcomes.allSatisfy { $0.isStored })
                next += batch.count
            } catch {
                #expect(error.isRetriable, "\(error)")
                failures += 1
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        #expect(failures >= 1, "the restart was never noticed")
        expectStored(try await readStream(server, "directus.articles"), exactly: entries)
    }

    @Test func anACLUserAndAPasswordAuthenticate() async throws {
        let server = try await startedRedis(password: "default-secret", user: ("bridge", "s@cret/pass"))
        let asUser = RedisClient(
            settings: try RedisSettings(url: server.url(credentials: "bridge:s%40cret%2Fpass", database: 2))
        )
        try await asUser.ping()
        let entries = redisEntries(count: 20, items: 3)
        #expect(try await asUser.append(entries, settings: RedisStreamSettings()).allSatisfy { $0.isStored })
        let asDefault = RedisClient(settings: try RedisSettings(url: server.url(credentials: ":default-secret")))
        try await asDefault.ping()

        for credentials in [":wrong-secret", "bridge:wrong", nil] {
            let refused = RedisClient(settings: try RedisSettings(url: server.url(credentials: credentials)))
            do {
                try await refused.ping()
                Issue.record("\(credentials ?? "no credentials") accepted")
            } catch {
                #expect(error.kind == .authentication, "\(error)")
                #expect(!error.message.contains("wrong"), "a password in \(error.message)")
            }
        }
    }

    @Test func tlsWithTheTestCAAndWithoutIt() async throws {
        let server = try await startedRedis(tls: true)
        let ca = try #require(server.certificates?.ca)
        let client = RedisClient(settings: try RedisSettings(url: server.url(), caFile: ca))
        let entries = redisEntries(count: 300, items: 7)
        #expect(try await client.append(entries, settings: RedisStreamSettings()).allSatisfy { $0.isStored })
        expectStored(try await readStream(server, "directus.articles"), exactly: entries)

        let untrusting = RedisClient(settings: try RedisSettings(url: server.url()))
        do {
            try await untrusting.ping()
            Issue.record("a server signed by an unknown CA was trusted")
        } catch {
            #expect(error.kind == .authentication && error.message.contains("certificate"), "\(error)")
        }
    }

    @Test func aServerThatIsDownIsRetriable() async throws {
        let port = try freeLoopbackPort()
        let client = RedisClient(settings: try RedisSettings(url: "redis://127.0.0.1:\(port)"))
        do {
            try await client.ping()
            Issue.record("connected to nothing")
        } catch {
            #expect(error.kind == .retriable, "\(error)")
        }
    }
}
