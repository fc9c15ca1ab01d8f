import BridgeTestSupport
import BridgeJSON
import Testing

/// A frame's element ranges with the first one inline: the same elements, order and equality as an array.
@Suite struct JSONRangeListTests {
    static func range(_ start: Int) -> JSONRange { JSONRange(start: start, end: start + 2, kind: .object) }

    @Test func emptyOneAndSeveral() {
        var list = JSONRangeList()
        #expect(list.isEmpty)
        #expect(Array(list) == [])
        list.append(Self.range(1))
        #expect(Array(list) == [Self.range(1)])
        #expect(list.first == Self.range(1))
        list.append(Self.range(5))
        list.append(Self.range(9))
        #expect(list.count == 3)
        #expect(Array(list) == [Self.range(1), Self.range(5), Self.range(9)])
        #expect(list[2] == Self.range(9))
        #expect(list == [Self.range(1), Self.range(5), Self.range(9)])
        #expect(list != [Self.range(1), Self.range(5)])
    }

    @Test func decodedFramesListTheirItems() throws {
        let one = Array(#"{"type":"subscription","event":"create","data":[{"id":1}],"uid":"s"}"#.utf8)
        let three = Array(#"{"type":"subscription","event":"delete","data":[1, "2",3],"uid":"s"}"#.utf8)
        let empty = Array(#"{"type":"subscription","event":"create","data":[],"uid":"s"}"#.utf8)
        guard case .array(let items) = try DirectusServerMessage(decoding: one).data,
            case .array(let keys) = try DirectusServerMessage(decoding: three).data,
            case .array(let none) = try DirectusServerMessage(decoding: empty).data
        else {
            Issue.record("no arrays")
            return
        }
        #expect(items.map { String(decoding: one[$0.offsets], as: UTF8.self) } == [#"{"id":1}"#])
        #expect(keys.map { $0.keyString(in: three) } == ["1", "2", "3"])
        #expect(none.isEmpty)
    }
}
