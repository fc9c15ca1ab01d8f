import BridgeJSON
import Testing

@testable import BridgeActivity
@testable import BridgeEvents

/// A snapshot of a collection with text keys that Swift's `String` holds equal and Directus holds apart: "é" (U+00E9)
/// and "e\u{301}" (e and a combining accent) are two items, ordered by their bytes (docs/RELIABILITY.md, "Careless or
/// hostile operators"). Keys are compared by their UTF-8 bytes here, never with `==` on `String`.
@Suite struct SnapshotKeyBytesTests {
    static let composed = "\u{E9}"  // é, C3 A9
    static let decomposed = "e\u{301}"  // e + ◌́, 65 CC 81

    /// The fake holds both forms as two items and pages them in byte order (the test below needs both).
    @Test func theFakeHoldsBothFormsApartInByteOrder() async throws {
        let directus = FakeDirectus()
        for key in [Self.composed, "z", Self.decomposed, "a"] { directus.seed("tags", key, ["id": .string(key)]) }
        let query = subscription("tags").query
        let page = try await directus.itemsPage(query, after: nil, limit: 10)
        let keys = page.entries.compactMap { entry -> String? in
            guard case .item(let item) = entry else { return nil }
            return query.key(of: item)
        }
        #expect(keys.map { Array($0.utf8) } == ["a", Self.decomposed, "z", Self.composed].map { Array($0.utf8) })
        let after = try await directus.itemsPage(query, after: .string(Self.decomposed), limit: 10)
        #expect(after.entries.count == 2, "z and é come after e\u{301}")
        let read = try await directus.items(query, keys: [Self.composed])
        #expect(read.items.map { Array(($0["id"]?.stringValue ?? "").utf8) } == [Array(Self.composed.utf8)])
    }

    /// "e\u{301}" is deleted after the watermark, before its page is read: it gets its `data: null` line with the page
    /// after which the log shows its delete (the one ending at "z"), and is kept as given that line. "é" comes in the
    /// last page and gets its line with its data. With those keys kept as `String` (before 1532277), "é" was taken for
    /// the deleted one and got no line at all: the snapshot skipped an item that was there.
    @Test func anItemWhoseKeyEqualsADeletedOnesAsAStringKeepsItsLine() async throws {
        let directus = FakeDirectus()
        for key in ["a", "b", Self.decomposed, "f", "z", Self.composed] {
            directus.seed("tags", key, ["id": .string(key), "name": .string("tag " + key)])
        }
        directus.commit(9, "create", "comments", "1", item: ["id": 1])
        directus.state.withLock {
            $0.beforePage[2] = [(id: 10, action: "delete", collection: "tags", key: Self.decomposed)]
        }
        let harness = try ReaderHarness(
            directus: directus, subscriptions: [subscription("tags", snapshot: true)], snapshotPageSize: 2)
        harness.start()
        let lines = try await harness.collect(7)
        try await harness.wait { harness.store.subscriptions["tags"]?.snapshotDone == true }
        await harness.halt()
        let keys = lines.map { Array(($0.json["key"]?.stringValue ?? "").utf8) }
        let expected = ["a", "b", "f", "z", Self.decomposed, Self.composed, Self.decomposed]
        #expect(keys == expected.map { Array($0.utf8) }, "\(lines.map(\.id))")
        #expect(lines.map(\.event) == Array(repeating: .snapshot, count: 6) + [.delete])
        #expect(lines.count == 7 && lines[4].json["data"] == .null, "the deleted one: no data")
        #expect(lines.count == 7 && lines[5].json["data"]?["name"] == .string("tag " + Self.composed))
    }
}
