import BridgeJSON
import Testing

/// The first member the decoder notes while it validates an item, and the key taken from it: the same range, the same
/// errors and the same key text as the validating skip and the lookup it replaces on the event path.
@Suite struct FirstMemberKeyTests {
    /// Items with their key first, elsewhere, missing, escaped, of every kind, with whitespace and nesting.
    static let items = [
        #"{"id":42,"title":"Hello"}"#, #"{"id":-7}"#, #"{"id":0}"#, #"{"id":12345678901234567890123}"#,
        #"{"id":""}"#, #"{"id":"plain-text","n":1}"#, #"{"id":"a\"b\\c\u00e9\ud83d\ude00"}"#, #"{"id":"x\/y"}"#,
        #"{"id":1.5}"#, #"{"id":1e3}"#, #"{"id":-0.0}"#, #"{"id":true}"#, #"{"id":false}"#, #"{"id":null}"#,
        #"{"id":{"id":1}}"#, #"{"id":[1]}"#, #"{"slug":"hello-world","id":3}"#,
        #"{"title":"x","nested":{"id":1},"list":[{"id":2}],"id":7}"#, #"{"\u0069d":5}"#, #"{"i\u0064":"e"}"#,
        #"{"clé":"v","id":"w"}"#, "{\"e\u{301}\":1,\"\u{E9}\":2}", #"{"title":"no key"}"#, "{}", "{ }",
        #"{ "id" : 8 , "x" : [ ] }"#, "{\n\t\"id\"\r\n:\"spaced\"\n}", #"{"idx":1,"id":2}"#, #"{"i":1,"id":2}"#,
        #"{"":"empty name","id":3}"#, #"{"id":4,"id":5}"#, #"{"a":[[[{"id":6}]]],"id":"deep"}"#,
        #"{"uuid":"8f14e45f-ceea-467f-a0e6-7f3d2c1b0a99"}"#,
    ]
    /// Names asked for: the first member's, a later one's, prefixes, escapes' texts, missing ones.
    static let names = ["id", "slug", "title", "uuid", "clé", "\u{E9}", "e\u{301}", "", "i", "idx", "ID", "missing"]

    /// The message of `frame`, its bytes and the first item's member its decoding noted.
    private func decode(_ frame: String) throws -> (DirectusServerMessage, [UInt8], JSONFirstMember?) {
        let bytes = Array(frame.utf8)
        var first: JSONFirstMember?
        let message = try bytes.withUnsafeBytes { buffer in
            Result { () throws(DirectusMessageError) in
                try DirectusServerMessage(decoding: buffer, firstItemMember: &first)
            }
        }.get()
        #expect(try DirectusServerMessage(decoding: bytes) == message)
        return (message, bytes, first)
    }

    @Test(arguments: items)
    func theKeyFromTheNotedMemberIsTheLookupsForEveryName(item: String) throws {
        let frames = [
            #"{"type":"subscription","event":"create","data":[\#(item),\#(item)],"uid":"s"}"#,
            #"{"type":"subscription","event":"create","data":[{"id":"other","slug":9},\#(item)]}"#,
            #"{"data":\#(item),"type":"subscription","event":"update"}"#,
        ]
        for frame in frames {
            let (message, bytes, noted) = try decode(frame)
            let elements: JSONRangeList
            switch message.data {
            case .array(let ranges): elements = ranges
            case .object(let range): elements = [range]
            default: elements = []
            }
            #expect(elements.count >= 1)
            for element in elements {
                for name in Self.names {
                    let lookup = element.member(name, in: bytes)?.keyString(in: bytes)
                    let fromMember = element.key(named: name, first: noted, in: bytes)
                    #expect(fromMember == lookup, "\(name) in \(frame)")
                }
            }
        }
    }

    @Test func theNotedMemberIsTheFirstItemsFirst() throws {
        let (_, bytes, noted) = try decode(#"{"type":"subscription","data":[{"id":42,"t":"x"},{"id":"7"}]}"#)
        let first = try #require(noted)
        #expect(bytes.text(of: first.name) == #""id""# && !first.nameHasEscapes)
        #expect(bytes.text(of: first.value) == "42" && first.value.kind == .number && first.valueIsPlainKey)
        #expect(first.objectStart == bytes.firstIndex(of: UInt8(ascii: "{"), after: 1))
        let cases: [(String, String, JSONKind, Bool)] = [
            (#"{ "\u0069d" : "a\"b" }"#, #""a\"b""#, .string, false), (#"{"id":"ab"}"#, #""ab""#, .string, true),
            (#"{"id":1.5}"#, "1.5", .number, false), (#"{"id":-3}"#, "-3", .number, true),
            (#"{"id":null}"#, "null", .null, false), (#"{"id":[1,{}]}"#, "[1,{}]", .array, false),
        ]
        for (item, value, kind, plain) in cases {
            let (_, bytes, noted) = try decode(#"{"type":"subscription","data":\#(item)}"#)
            let first = try #require(noted, "\(item)")
            #expect(bytes.text(of: first.value) == value && first.value.kind == kind && first.valueIsPlainKey == plain)
            #expect(first.nameHasEscapes == item.contains(#"\u0069"#))
        }
        for data in ["[]", "{}", "[1,{\"id\":1}]", "\"id\"", "7", "null"] {
            #expect(try decode(#"{"type":"subscription","data":\#(data)}"#).2 == nil, "\(data)")
        }
        // A later `data` member replaces the first, and what was noted in it.
        let (_, _, twice) = try decode(#"{"type":"subscription","data":[{"id":1}],"data":[]}"#)
        #expect(twice == nil)
    }

    /// Wherever a frame is cut or spoiled, and at every nesting limit, the noting skip gives what the validating skip
    /// gives: the same range and end, or the same error at the same offset.
    @Test func theNotingSkipAgreesWithTheValidatingSkipOnEveryPrefixAndLimit() {
        let spoiled = [
            #"{"id":01}"#, #"{"id":"a\x"}"#, #"{"id" 1}"#, #"{id:1}"#, #"{"id":1,}"#, #"{"id":1 "b":2}"#,
            #"{"id":tru}"#, #"{"id":[1,]}"#, #"{"id":{"a":1},"b":}"#, #"{"id":"x"]"#, "{\"id\":\"\u{1}\"}",
        ]
        for text in Self.items + spoiled {
            let bytes = Array(text.utf8)
            for cut in 1...bytes.count {
                for maxDepth in [1, 2, 3, 4, 6, JSONScanner.defaultMaxDepth] {
                    for depth in [0, 1, 2] {
                        let prefix = Array(bytes[..<cut])
                        prefix.withUnsafeBytes { buffer in
                            var plain = JSONScanner(buffer, maxDepth: maxDepth)
                            var noting = JSONScanner(buffer, maxDepth: maxDepth)
                            let expected = Result { () throws(JSONSyntaxError) in try plain.skipValue(depth: depth) }
                            let got = Result { () throws(JSONSyntaxError) in
                                try noting.skipObjectNotingFirstMember(depth: depth).object
                            }
                            #expect(got == expected, "\(text) cut at \(cut), max depth \(maxDepth), depth \(depth)")
                            #expect(noting.position == plain.position || (try? expected.get()) == nil)
                        }
                    }
                }
            }
        }
    }

    @Test func aMemberNotedInAnotherObjectOrBufferIsNotUsed() throws {
        let (message, bytes, noted) = try decode(#"{"type":"subscription","data":[{"id":"first"},{"id":"second"}]}"#)
        guard case .array(let elements) = message.data else {
            Issue.record("no array")
            return
        }
        #expect(elements[1].key(named: "id", first: noted, in: bytes) == "second")
        // A buffer too short for the object: the lookup's answer (nil), not a read past it.
        #expect(elements[0].key(named: "id", first: noted, in: Array(bytes[..<40])) == nil)
        let other = Array(#"{"type":"subscription","data":[{"id":"FIRST"},{"id":"other"}]}"#.utf8)
        #expect(elements[0].key(named: "id", first: noted, in: other) == "FIRST")
    }
}

extension Array where Element == UInt8 {
    /// The offset of the first `byte` at or after `start`.
    fileprivate func firstIndex(of byte: UInt8, after start: Int) -> Int? {
        self[start...].firstIndex(of: byte)
    }
}
