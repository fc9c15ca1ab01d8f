import BridgeJSON
import Testing

/// `JSONAnswerMeter`, the bound on what a REST answer may hold (issue 23, item 3): values, nesting and the items of
/// `data` are counted as bytes arrive, in any split, and an answer over a bound is refused at once.
@Suite struct JSONAnswerMeterTests {
    /// Meters `text` in pieces of `piece` bytes; returns the meter and the first refusal.
    private func meter(
        _ text: String, piece: Int = .max, values: Int = 1000, items: Int? = nil
    ) -> (JSONAnswerMeter, JSONAnswerMeter.Refusal?) {
        var meter = JSONAnswerMeter(maximumValues: values, maximumItems: items)
        let bytes = Array(text.utf8)
        var refusal: JSONAnswerMeter.Refusal?
        var start = 0
        while start < bytes.count, refusal == nil {
            let end = min(bytes.count, start + max(1, piece))
            refusal = bytes[start..<end].withUnsafeBytes { meter.consume($0) }
            start = end
        }
        return (meter, refusal)
    }

    @Test(arguments: [1, 2, 3, 7, Int.max])
    func countsEveryValueAndTheItemsOfDataInAnySplit(piece: Int) {
        let answer = #"{"meta":{"filter_count":2},"data":[{"id":1,"t":"a]\"[{,"},{"id":2,"tags":["x","y"],"n":null}]}"#
        let (counted, refusal) = meter(answer, piece: piece, items: 2)
        #expect(refusal == nil)
        // root, meta, 2, data, item 1 (+ 2 members), item 2 (+ id, tags, 2 tags, null)
        #expect(counted.values == 13)
        #expect(counted.items == 2)
    }

    @Test func moreItemsThanAskedForAreRefusedAtTheFirstOneOver() {
        let wide = #"{"data":["# + String(repeating: "{},", count: 100_000) + "{}]}"
        let (counted, refusal) = meter(wide, piece: 4096, values: 1_000_000, items: 1)
        #expect(refusal == .tooManyItems(1))
        #expect(counted.items == 2)
    }

    @Test func tooManyValuesAreRefusedWithoutItemBound() {
        let long = #"{"data":[{"id":1,"values":["# + String(repeating: "0,", count: 5000) + "0]}]}"
        #expect(meter(long, piece: 100, values: 1000).1 == .tooManyValues(1000))
        #expect(meter(long, values: 10_000).1 == nil)
    }

    @Test func nestingDeeperThanTheParserAllowsIsRefused() {
        let deep = #"{"data":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}"
        #expect(meter(deep, piece: 13).1 == .tooDeep(JSONScanner.defaultMaxDepth))
        let fine = #"{"data":"# + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}"
        #expect(meter(fine).1 == nil)
    }

    @Test func onlyTheTopLevelDataArrayHasItemsCounted() {
        // `data` nested deeper, `data` with an escape in its name, `database`, and `data` as an object.
        let answers = [
            #"{"meta":{"data":[1,2,3]},"x":[1,2,3]}"#,
            #"{"d\u0061ta":[1,2,3]}"#,
            #"{"database":[1,2,3]}"#,
            #"{"data":{"a":1,"b":2,"c":3}}"#,
            #"[{"data":[1,2,3]}]"#,
        ]
        for answer in answers {
            let (counted, refusal) = meter(answer, items: 1)
            #expect(refusal == nil, "\(answer)")
            #expect(counted.items == 0, "\(answer)")
        }
        #expect(meter(#"{"errors":[],"data":[1,2]}"#, items: 1).1 == .tooManyItems(1))
    }

    @Test func aBodyThatIsNotAnObjectOrArrayIsLeftToTheParse() {
        let page = "<html>" + String(repeating: "a ", count: 10_000) + "</html>"
        let (counted, refusal) = meter(page, values: 10)
        #expect(refusal == nil)
        #expect(counted.values == 0)
        #expect(meter("  \n[1,2,3]", values: 2).1 == .tooManyValues(2))
    }

    @Test func bytesAfterARefusalChangeNothing() {
        var meter = JSONAnswerMeter(maximumValues: 2, maximumItems: nil)
        let first = Array("[1,".utf8).withUnsafeBytes { meter.consume($0) }
        let second = Array("2,3]".utf8).withUnsafeBytes { meter.consume($0) }
        #expect(first == nil && second == .tooManyValues(2))
        #expect(Array("[[[[".utf8).withUnsafeBytes { meter.consume($0) } == .tooManyValues(2))
        #expect(meter.values == 3)
    }
}
