import BridgeJSON
import Testing

@Suite struct JSONValueTests {
    @Test(arguments: [
        "null", "true", "false", "0", "-0", "1.50", "1E+2", "12345678901234567890123", "\"\"", "\"a\\\"b\\\\c\\n\"",
        "[]",
        "{}", "[1,[2,[3,{}]],\"x\"]", "{\"b\":1,\"a\":{\"z\":[true,null],\"y\":\"é𝄞\"},\"\":0}",
        "{\"data\":[{\"id\":1,\"title\":\"Hello\"}],\"meta\":{\"total_count\":1}}",
    ])
    func compactDocumentsRoundTripExactly(_ text: String) throws {
        let value = try JSONValue.parse(text)
        #expect(value.serializedString() == text)
        #expect(try JSONValue.parse(value.serialized()) == value)
    }

    @Test func whitespaceAndEscapesAreNormalised() throws {
        let value = try JSONValue.parse(" { \"a\" : [ 1 , \"\\u00e9\\/\\ud83d\\ude00\" ] }\n")
        #expect(value.serializedString() == "{\"a\":[1,\"é/😀\"]}")
    }

    @Test func accessors() throws {
        let value = try JSONValue.parse(
            #"{"data":[{"id":1,"slug":"a","big":12345678901234567890,"f":2.5,"ok":true,"none":null}],"meta":{}}"#
        )
        #expect(value["data"]?[0]?["id"]?.int64Value == 1)
        #expect(value["data"]?[0]?["id"]?.intValue == 1)
        #expect(value["data"]?[0]?["id"]?.keyString == "1")
        #expect(value["data"]?[0]?["slug"]?.stringValue == "a")
        #expect(value["data"]?[0]?["slug"]?.keyString == "a")
        #expect(value["data"]?[0]?["big"]?.int64Value == nil)
        #expect(value["data"]?[0]?["big"]?.keyString == "12345678901234567890")
        #expect(value["data"]?[0]?["f"]?.doubleValue == 2.5)
        #expect(value["data"]?[0]?["f"]?.int64Value == nil)
        #expect(value["data"]?[0]?["f"]?.keyString == nil)
        #expect(value["data"]?[0]?["ok"]?.boolValue == true)
        #expect(value["data"]?[0]?["none"]?.isNull == true)
        #expect(value["data"]?[0]?["missing"] == nil)
        #expect(value["data"]?[1] == nil)
        #expect(value["data"]?[-1] == nil)
        #expect(value["meta"]?.objectValue?.isEmpty == true)
        #expect(value["data"]?.arrayValue?.count == 1)
        #expect(value[0] == nil)
        #expect(value["data"]?["id"] == nil)
        #expect(value.stringValue == nil)
    }

    @Test func literalsBuildMessagesInOrder() {
        let subscribe: JSONValue = [
            "type": "subscribe", "collection": "articles", "uid": "articles:create",
            "query": ["fields": ["*"], "filter": ["status": ["_eq": "published"]], "limit": -1],
            "event": "create", "flag": true, "nothing": nil, "ratio": 0.25,
        ]
        #expect(
            subscribe.serializedString()
                == #"{"type":"subscribe","collection":"articles","uid":"articles:create","query":{"fields":["*"],"filter":{"status":{"_eq":"published"}},"limit":-1},"event":"create","flag":true,"nothing":null,"ratio":0.25}"#
        )
    }

    @Test func repeatedKeysKeepFirstPositionAndLastValue() throws {
        let value = try JSONValue.parse(#"{"a":1,"b":2,"a":3}"#)
        #expect(value.objectValue?.keys == ["a", "b"])
        #expect(value["a"]?.int64Value == 3)
        #expect(value.serializedString() == #"{"a":3,"b":2}"#)
        var many = "{"
        for index in 0..<20 { many += "\"k\(index)\":\(index)," }
        many += "\"k3\":\"again\"}"
        let big = try JSONValue.parse(many)
        #expect(big.objectValue?.count == 20)
        #expect(big["k3"] == "again")
        #expect(big.objectValue?.keys.first == "k0")
    }

    @Test func objectEqualityIgnoresOrderButNotValues() throws {
        #expect(try JSONValue.parse(#"{"a":1,"b":[1,2]}"#) == JSONValue.parse(#"{"b":[1,2],"a":1}"#))
        #expect(try JSONValue.parse(#"{"a":1,"b":[1,2]}"#) != JSONValue.parse(#"{"b":[2,1],"a":1}"#))
        #expect(try JSONValue.parse(#"{"a":1}"#) != JSONValue.parse(#"{"a":1,"b":null}"#))
        #expect(try JSONValue.parse("[1,2]") != JSONValue.parse("[2,1]"))
        // Numbers compare by their text.
        #expect(try JSONValue.parse("1.0") != JSONValue.parse("1"))
    }

    @Test func objectEditing() {
        var object: JSONObject = ["a": 1, "b": 2]
        object["c"] = "x"
        object["a"] = nil
        object["b"] = [true]
        #expect(object.keys == ["b", "c"])
        #expect(JSONValue.object(object).serializedString() == #"{"b":[true],"c":"x"}"#)
        #expect(object.map(\.key) == ["b", "c"])
        let pairs = JSONObject([("x", 1), ("y", 2), ("x", 3)])
        #expect(pairs.keys == ["x", "y"])
        #expect(pairs["x"] == 3)
    }

    @Test func numbers() {
        #expect(JSONNumber(text: "-12.5e-3")?.doubleValue == -0.0125)
        #expect(JSONNumber(text: "01") == nil)
        #expect(JSONNumber(text: "1.") == nil)
        #expect(JSONNumber(text: "") == nil)
        #expect(JSONNumber(text: " 1") == nil)
        #expect(JSONNumber(text: "NaN") == nil)
        #expect(JSONNumber(text: "9223372036854775807")?.int64Value == Int64.max)
        #expect(JSONNumber(text: "9223372036854775808")?.int64Value == nil)
        #expect(JSONNumber(text: "-9223372036854775808")?.int64Value == Int64.min)
        #expect(JSONNumber(text: "1e400")?.doubleValue == .infinity)
        #expect(JSONNumber(Double.nan) == nil)
        #expect(JSONNumber(Double.infinity) == nil)
        #expect(JSONValue(Double.nan) == .null)
        #expect(JSONValue(0.5) == .number(JSONNumber(text: "0.5")!))
        #expect(JSONValue(Int64(-3)).serializedString() == "-3")
        #expect(JSONNumber(1e300).map { JSONNumber(text: $0.text) != nil } == true)
        #expect(JSONNumber(-1e-300).map { JSONNumber(text: $0.text) != nil } == true)
    }

    @Test func stringsDecodeEscapesAndKeepUnicode() throws {
        let value = try JSONValue.parse(#"["\u0041\u00e9\u20ac\ud834\udd1e\b\f\n\r\t\"\\\/", "raw é𝄞", "\u0000"]"#)
        #expect(value[0]?.stringValue == "Aé€𝄞\u{8}\u{C}\n\r\t\"\\/")
        #expect(value[1]?.stringValue == "raw é𝄞")
        #expect(value[2]?.stringValue == "\u{0}")
    }

    @Test func parseErrorsAreTyped() {
        #expect(throws: JSONSyntaxError(.trailingContent, at: 3)) { try JSONValue.parse("{} x") }
        #expect(throws: JSONSyntaxError(.unexpectedByte(UInt8(ascii: "}")), at: 7)) {
            try JSONValue.parse(#"{"a":1,}"#)
        }
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse([UInt8]()) }
        #expect(throws: JSONSyntaxError.self) {
            try JSONValue.parse(JSONRange(start: 0, end: 10, kind: .array), in: [1])
        }
    }
}
