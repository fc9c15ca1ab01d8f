import Testing

@testable import BridgeActivity

/// Keys told apart by their bytes, as Directus and its database do, not by Swift's canonical equivalence.
@Suite struct ItemKeyTests {
    @Test func keysSwiftHoldsEqualAreTwoKeysAndTwoItemsOfAnOrder() {
        let precomposed = "\u{E9}"
        let decomposed = "e\u{301}"
        #expect(precomposed == decomposed, "Swift's String equality, which keys must not use")
        #expect(ItemKey(precomposed) != ItemKey(decomposed))
        #expect(Set([ItemKey(precomposed), ItemKey(decomposed), ItemKey("\u{E9}")]).count == 2)
        var before = SortOrder()
        before.append(key: precomposed, value: "1")
        before.append(key: decomposed, value: "2")
        #expect(before.count == 2 && before.value(of: decomposed) == "2")
        var after = SortOrder()
        after.append(key: precomposed, value: "1")
        after.append(key: decomposed, value: "3")
        #expect(before.moved(to: after).map { Array($0.unicodeScalars) } == [Array(decomposed.unicodeScalars)])
    }

    /// Keys of an item read are batched by their bytes in the URL (`keyBytesPerRequest`) as text keys always were: the
    /// read of a batch of changes holds them as `ItemKey`s since 10b13bf, and the batching, which measured only
    /// `String`s, then put 500 keys of any length into one request — 200 keys of 200 bytes made a URL of 43 KB, which
    /// Node refuses (431), on every retry.
    @Test func itemReadsOfLongKeysStayWithinTheURLBudget() async throws {
        let keys = (1...200).map { String(repeating: "k", count: 200) + "\($0)" }
        let limit = DirectusActivitySource.keysPerRequest
        let byText = DirectusActivitySource.batchLength(keys[...], at: limit)
        #expect(byText < 200)
        #expect(DirectusActivitySource.batchLength(keys.map(ItemKey.init)[...], at: limit) == byText)
        let directus = SizedDirectus(defaultLimit: 16 << 20)
        let source = DirectusActivitySource(api: directus.api)
        _ = try await source.items(ItemQuery(collection: "articles", primaryKey: "id", query: nil), keys: keys)
        let longest = directus.state.withLock { $0.longestURL }
        #expect(longest < 16 << 10, "a request head Node takes: \(longest) bytes")
    }
}
