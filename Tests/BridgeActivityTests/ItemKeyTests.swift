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
}
