import BridgeRedis
import BridgeSystem
import BridgeTestSupport
import Foundation
import Testing

/// Event-shaped stream entries: the contract's fields, ids `<prefix>_<n>`, `items` items taking turns.
func redisEntries(count: Int, items: Int, stream: String = "directus.articles", prefix: String = "evt")
    -> [RedisStreamEntry]
{
    (0..<count).map { index in
        let key = "item-\(index % items)"
        let id = "\(prefix)_\(String(format: "%06d", index))"
        let payload = """
            {"id":"\(id)","type":"items.update","collection":"articles","event":"update","key":"\(key)",\
            "seq":\(index),"data":{"id":"\(key)","title":"Article \(index)"}}
            """
        return RedisStreamEntry(
            stream: stream,
            dedupID: id,
            fields: [
                .init("id", Array(id.utf8)), .init("type", Array("items.update".utf8)),
                .init("collection", Array("articles".utf8)), .init("key", Array(key.utf8)),
                .init("event", Array("update".utf8)), .init("payload", Array(payload.utf8)),
            ]
        )
    }
}

/// Every entry of `stream`, read with redis-py off the cooperative pool.
func readStream(_ server: RedisServer, _ stream: String, credentials: String? = nil) async throws
    -> [RedisStreamRecord]
{
    try await BlockingExecutor.shared.perform { try server.readStream(stream, credentials: credentials) }
}

/// Checks that `stored` holds each of `entries` exactly once, with its fields, in the order appended.
func expectStored(
    _ stored: [RedisStreamRecord],
    exactly entries: [RedisStreamEntry],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(stored.map { $0.fields["id"] ?? "" } == entries.map(\.dedupID), sourceLocation: sourceLocation)
    for (entry, original) in zip(stored, entries) {
        let expected = Dictionary(
            uniqueKeysWithValues: original.fields.map { ($0.name, String(decoding: $0.value, as: UTF8.self)) }
        )
        #expect(entry.fields == expected, sourceLocation: sourceLocation)
    }
}

/// A started server in a new temporary directory.
func startedRedis(tls: Bool = false, password: String? = nil, user: (name: String, password: String)? = nil)
    async throws -> RedisServer
{
    // With `tls` the initializer makes certificates with a child process: off the cooperative pool.
    let server = try await BlockingExecutor.shared.perform {
        try RedisServer(
            in: try TestEnvironment.makeTemporaryDirectory(prefix: "redis"),
            tls: tls,
            password: password,
            user: user
        )
    }
    try await server.start()
    return server
}
