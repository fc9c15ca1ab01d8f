import BridgeJSON
import Testing

/// Reading the primary key of an item and turning it into the contract's `key` text.
@Suite struct ItemKeyTests {
    func item(_ text: String) throws -> (JSONRange, [UInt8]) {
        let bytes = Array(text.utf8)
        return (try JSONScanner.validate(bytes), bytes)
    }

    @Test(arguments: [
        (#"{"id":42,"title":"Hello"}"#, "id", "42"),
        (#"{"id":-7}"#, "id", "-7"),
        (#"{"id":0}"#, "id", "0"),
        (#"{"id":12345678901234567890123}"#, "id", "12345678901234567890123"),
        (#"{"slug":"hello-world","id":3}"#, "slug", "hello-world"),
        (#"{"title":"x","nested":{"id":1},"list":[{"id":2}],"id":7}"#, "id", "7"),
        (#"{ "code" : "a\"b\\c\u00e9\ud83d\ude00" }"#, "code", "a\"b\\cé😀"),
        (#"{"\u0069d":5}"#, "id", "5"),
        (#"{"uuid":"8f14e45f-ceea-467f-a0e6-7f3d2c1b0a99"}"#, "uuid", "8f14e45f-ceea-467f-a0e6-7f3d2c1b0a99"),
        (#"{"clé":"v"}"#, "clé", "v"),
        (#"{"id":""}"#, "id", ""),
    ])
    func keyOfItem(text: String, field: String, expected: String) throws {
        let (object, bytes) = try item(text)
        let value = try #require(object.member(field, in: bytes))
        #expect(value.keyString(in: bytes) == expected)
    }

    @Test(arguments: [
        #"{"id":1.5}"#, #"{"id":1e3}"#, #"{"id":-0.0}"#, #"{"id":true}"#, #"{"id":null}"#, #"{"id":{"a":1}}"#,
        #"{"id":[1]}"#,
    ])
    func nonKeyValuesGiveNil(_ text: String) throws {
        let (object, bytes) = try item(text)
        let value = try #require(object.member("id", in: bytes))
        #expect(value.keyString(in: bytes) == nil)
    }

    @Test func missingMembersAndWrongKinds() throws {
        let (object, bytes) = try item(#"{"title":"x","nested":{"id":1}}"#)
        #expect(object.member("id", in: bytes) == nil)
        #expect(object.member("ID", in: bytes) == nil)
        #expect(object.member("titl", in: bytes) == nil)
        #expect(try item("{}").0.member("id", in: Array("{}".utf8)) == nil)
        let (array, arrayBytes) = try item("[1,2]")
        #expect(array.member("id", in: arrayBytes) == nil)
        #expect(array.elements(in: arrayBytes)?.map { $0.keyString(in: arrayBytes) } == ["1", "2"])
        #expect(object.elements(in: bytes) == nil)
        #expect(try item("[]").0.elements(in: Array("[]".utf8)) == [])
    }

    @Test func keysAreComparedByBytesNotUnicodeEquivalence() throws {
        // "é" precomposed (U+00E9) and decomposed (e + U+0301) are equal Swift Strings but different JSON keys.
        let (object, bytes) = try item("{\"e\u{301}\":1,\"\u{E9}\":2}")
        #expect(object.member("\u{E9}", in: bytes)?.keyString(in: bytes) == "2")
        #expect(object.member("e\u{301}", in: bytes)?.keyString(in: bytes) == "1")
    }

    @Test func rangesFromAnotherBufferGiveNilNotACrash() throws {
        let (object, _) = try item(#"{"id":42,"title":"a long enough title"}"#)
        let short = Array(#"{"id":1}"#.utf8)
        #expect(object.member("id", in: short) == nil)
        let bogus = JSONRange(start: 5, end: 2, kind: .string)
        #expect(bogus.stringValue(in: short) == nil)
        #expect(bogus.keyString(in: short) == nil)
        #expect(JSONRange(start: -1, end: 3, kind: .number).keyString(in: short) == nil)
        #expect(JSONRange(start: 0, end: 8, kind: .number).keyString(in: short) == nil)  // not a number there
        #expect(JSONRange(start: 1, end: 5, kind: .string).stringValue(in: short) == "id")
        #expect(JSONRange(start: 0, end: 3, kind: .string).stringValue(in: short) == nil)  // not a whole string
    }

    @Test func stringAndRawText() throws {
        let (object, bytes) = try item(#"{"n":-1.50e+2,"s":"x\ty"}"#)
        #expect(object.member("n", in: bytes)?.rawText(in: bytes) == "-1.50e+2")
        #expect(object.member("s", in: bytes)?.stringValue(in: bytes) == "x\ty")
        #expect(object.member("n", in: bytes)?.stringValue(in: bytes) == nil)
    }

    @Test func deleteKeysFromAFrame() throws {
        let bytes = Array(#"{"type":"subscription","event":"delete","data":["a\/b",7,"8",2.5,null],"uid":"s"}"#.utf8)
        let message = try DirectusServerMessage(decoding: bytes)
        guard case .array(let keys) = message.data else {
            Issue.record("no array")
            return
        }
        #expect(keys.map { $0.keyString(in: bytes) } == ["a/b", "7", "8", nil, nil])
    }

    @Test func valueOfAnItemAsATree() throws {
        let bytes = Array(#"{"type":"subscription","event":"create","data":[{"id":9,"tags":["x"]}]}"#.utf8)
        let message = try DirectusServerMessage(decoding: bytes)
        guard case .array(let ranges) = message.data, let first = ranges.first else {
            Issue.record("no items")
            return
        }
        let tree = try JSONValue.parse(first, in: bytes)
        #expect(tree == ["id": 9, "tags": ["x"]])
    }
}

/// `JSONRange.members`: several members of one object in a single pass, as activity rows are read in place.
@Suite struct JSONMembersTests {
    private func members(_ text: String, _ names: [String]) -> [String?]? {
        let bytes = Array(text.utf8)
        guard let root = try? JSONScanner.validate(bytes) else { return nil }
        return bytes.withUnsafeBytes { buffer in
            root.members(names, in: buffer)?.map { $0?.rawText(in: buffer) }
        }
    }

    @Test func findsEachNameOnceInOnePass() {
        let text = #"{"b":[1,{"a":2}], "a" : "x", "\u0063":3, "a":"second", "d":null}"#
        #expect(members(text, ["a", "c", "b", "z", "d"]) == [#""x""#, "3", #"[1,{"a":2}]"#, nil, "null"])
        #expect(members("{}", ["a"]) == [nil])
        #expect(members("[1]", ["a"]) == nil)
        #expect(members(#""a""#, ["a"]) == nil)
    }

    @Test func int64ValuesAreIntegersThatFit() {
        let cases: [(String, Int64?)] = [
            ("42", 42), ("-7", -7), ("9223372036854775807", .max), ("9223372036854775808", nil), ("1.0", nil),
            ("1e3", nil), (#""5""#, nil), ("null", nil),
        ]
        for (text, expected) in cases {
            let bytes = Array(text.utf8)
            let range = try? JSONScanner.validate(bytes)
            #expect(bytes.withUnsafeBytes { range?.int64Value(in: $0) } == expected, "\(text)")
        }
    }
}
