import BridgeConfig
import Testing

@Suite struct QueryJSONTests {
    /// The JSON text of a query written as the YAML block `lines` (indented under `query:`).
    func json(_ lines: [String]) throws -> String? {
        let yaml = minimalYAML.replacingOnce(
            "  - collection: articles\n",
            with: "  - collection: articles\n    query:\n" + lines.map { "      \($0)\n" }.joined()
        )
        return try config(yaml).subscriptions[0].query?.jsonText
    }

    @Test func keysKeepFileOrder() throws {
        #expect(try json(["zeta: 1", "alpha: 2", "mid: 3"]) == #"{"zeta":1,"alpha":2,"mid":3}"#)
    }

    @Test func plainScalarsAreTypedPerTheCoreSchema() throws {
        #expect(
            try json(["a: true", "b: False", "c: null", "d: ~", "e:", "f: 42", "g: -7", "h: 3.5", "i: 1e3", "j: word"])
                == #"{"a":true,"b":false,"c":null,"d":null,"e":null,"f":42,"g":-7,"h":3.5,"i":1e3,"j":"word"}"#
        )
    }

    @Test func yaml11SpellingsStayStrings() throws {
        #expect(
            try json(["a: yes", "b: off", "c: 0b101", "d: 1_000"]) == #"{"a":"yes","b":"off","c":"0b101","d":"1_000"}"#
        )
    }

    @Test func numbersAreNormalisedToJSONSyntax() throws {
        #expect(
            try json([
                "a: +5", "b: 007", "c: 0x1F", "d: 0o17", "e: .5", "f: 1.", "g: -0.25E+2", "h: 12345678901234567890",
            ])
                == #"{"a":5,"b":7,"c":31,"d":15,"e":0.5,"f":1.0,"g":-0.25e+2,"h":12345678901234567890}"#
        )
    }

    @Test func quotedScalarsAreAlwaysStrings() throws {
        #expect(
            try json(["a: \"true\"", "b: '42'", "c: \"\"", "d: !!str 7"]) == #"{"a":"true","b":"42","c":"","d":"7"}"#
        )
    }

    @Test func stringsAreEscaped() throws {
        #expect(
            try json(["a: \"quote \\\" backslash \\\\ tab \\t newline \\n bell \\a\"", "b: é☕"])
                == #"{"a":"quote \" backslash \\ tab \t newline \n bell \u0007","b":"é☕"}"#
        )
    }

    @Test func nestedStructures() throws {
        #expect(
            try json([
                "fields: [\"*\", author.name]", "filter:", "  _and:", "    - { status: { _eq: published } }",
                "    - { id: { _in: [1, 2] } }", "sort: [-date]", "deep: {}",
            ])
                == #"{"fields":["*","author.name"],"filter":{"_and":[{"status":{"_eq":"published"}},{"id":{"_in":[1,2]}}]},"sort":["-date"],"deep":{}}"#
        )
    }

    @Test func numericKeysAreStrings() throws {
        #expect(try json(["1: one", "true: yes"]) == #"{"1":"one","true":"yes"}"#)
    }

    @Test func valueSubscriptAndEquality() {
        let query = QueryValue.object([("limit", .number("5")), ("fields", .array([.string("id")]))])
        #expect(query["limit"] == .number("5"))
        #expect(query["missing"] == nil)
        #expect(query != .object([("fields", .array([.string("id")])), ("limit", .number("5"))]))
    }
}

@Suite struct YAMLCoreSchemaTests {
    func resolve(_ text: String, _ style: ScalarStyle = .plain) -> YAMLCoreSchema.Resolved {
        YAMLCoreSchema.resolve(YAMLScalar(text: text, style: style, endIndex: 0))
    }

    @Test func resolvesTheCoreSchema() {
        #expect(resolve("") == .null)
        #expect(resolve("NULL") == .null)
        #expect(resolve("TRUE") == .bool(true))
        #expect(resolve("-0") == .integer("-0"))
        #expect(resolve("0x") == .string("0x"))
        #expect(resolve("0xFFFFFFFFFFFFFFFFF") == .string("0xFFFFFFFFFFFFFFFFF"))
        #expect(resolve("1e") == .string("1e"))
        #expect(resolve(".") == .string("."))
        #expect(resolve("-.inf") == .float(nil))
        #expect(resolve(".NaN") == .float(nil))
        #expect(resolve("null", .doubleQuoted) == .string("null"))
        #expect(resolve("5", .literal) == .string("5"))
    }
}
