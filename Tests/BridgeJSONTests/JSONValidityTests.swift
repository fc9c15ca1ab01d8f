import BridgeJSON
import Testing

/// Validity cases named and modelled after JSONTestSuite (y_ must be accepted, n_ must be rejected; the i_ cases
/// are implementation-defined and listed with the choice made here).
@Suite struct JSONValidityTests {
    static let accepted: [String] = [
        // arrays and structure
        "[[]   ]", "[]", "[\"\"]", "[false]", "[null, 1, \"1\", {}]", "[null]", "[1\n]", " [1]", "[1,null,null,null,2]",
        "[2] ", "false", "42", "-0.1", "null", "\"asd\"", "true", "\"\"", "[\"a\"]\n", "[true]", " [] ",
        "\t\r\n [ \t\r\n1 \t\r\n] \t\r\n",
        // numbers
        "[123e65]", "[0e+1]", "[0e1]", "[ 4]",
        "[-0.000000000000000000000000000000000000000000000000000000000000000000000000000001]", "[20e1]", "[-0]",
        "[-123]", "[-1]", "[1E22]", "[1E-2]", "[1E+2]", "[123e45]", "[123.456e78]", "[1e-2]", "[1e+2]", "[123]",
        "[123.456789]", "[100000000000000000000]", "[1.5e999]", "[-1e-999]", "[0.0]", "[0]",
        // objects
        "{\"asd\":\"sdf\", \"dfg\":\"fgh\"}", "{\"asd\":\"sdf\"}", "{\"a\":\"b\",\"a\":\"c\"}",
        "{\"a\":\"b\",\"a\":\"b\"}",
        "{}", "{\"\":0}", "{\"foo\\u0000bar\": 42}", "{ \"min\": -1.0e+28, \"max\": 1.0e+28 }", "{\"a\":[]}",
        "{\"title\":\"\\u041f\\u043e\\u043b\\u0442\\u043e\\u0440\\u0430 \\u0417\\u0435\\u043c\\u043b\\u0435\" }",
        "{\n\"a\": \"b\"\n}",
        // strings and escapes
        "[\"\\u0060\\u012a\\u12AB\"]", "[\"\\uD801\\udc37\"]", "[\"\\ud83d\\ude39\\ud83d\\udc8d\"]",
        "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", "[\"\\\\u0000\"]", "[\"\\\"\"]", "[\"a/*b*/c/*d//e\"]", "[\"\\\\a\"]",
        "[\"\\\\n\"]", "[\"\\u0012\"]", "[\"\\uFFFF\"]", "[\"asd\"]", "[ \"asd\"]", "[\"\\uDBFF\\uDFFF\"]",
        "[\"new\\u00A0line\"]", "[\"\u{10FFFF}\"]", "[\"\u{FFFF}\"]", "[\"\\u0000\"]", "[\"\\u002c\"]", "[\"π\"]",
        "[\"\u{1BFFF}\"]", "[\"asd \"]", "\" \"", "[\"\\uD834\\uDd1e\"]", "[\"\\u0821\"]", "[\"\\u0123\"]",
        "[\"\u{2028}\"]", "[\"\u{2029}\"]", "[\"\\u0061\\u30af\\u30EA\\u30b9\"]", "[\"new\\u000Aline\"]",
        "[\"\u{7F}\"]", "[\"\\uA66D\"]", "[\"\\u005C\"]", "[\"⍂㈴⍂\"]", "[\"\\uDBFF\\uDFFE\"]", "[\"\\uD83F\\uDFFE\"]",
        "[\"\\u200B\"]", "[\"\\u2064\"]", "[\"\\uFDD0\"]", "[\"\\uFFFE\"]", "[\"\\u0022\"]", "[\"€𝄞\"]",
        "[\"a\u{7F}a\"]", "[\"0123456789abcdef0123456789abcdef\\\"0123456789\"]",
        // i_structure_500_nested_arrays: within the 512 limit
        String(repeating: "[", count: 500) + String(repeating: "]", count: 500),
    ]

    static let rejected: [String] = [
        // arrays
        "[1 true]", "[\"\": 1]", "[\"\"],", "[,1]", "[1,,2]", "[\"x\",,]", "[\"x\"]]", "[\"\",]", "[\"x\"", "[x",
        "[3[4]]", "[1:2]", "[,]", "[-]", "[   , \"\"]", "[\"a\",\n4\n,1,", "[1,]", "[1,,]", "[\u{0B}a]",
        "[*]", "[\"\"", "[1,", "[1,\n1\n,1", "[{}", "[fals]", "[nul]", "[tru]",
        // numbers
        "[++1234]", "[+1]", "[+Inf]", "[-01]", "[-1.0.]", "[-2.]", "[-NaN]", "[.-1]", "[.2e-3]", "[0.1.2]", "[0.3e+]",
        "[0.3e]", "[0.e1]", "[0E+]", "[0E]", "[0e+]", "[0e]", "[1.0e+]", "[1.0e-]", "[1.0e]", "[1 000.0]", "[1eE2]",
        "[2.e+3]", "[2.e-3]", "[2.e3]", "[9.e+]", "[Inf]", "[NaN]", "[１]", "[1+2]", "[0x1]", "[0x42]", "[Infinity]",
        "[0e+-1]", "[-123.123foo]", "[-Infinity]", "[-foo]", "[- 1]", "[-012]", "[-.123]", "[-1x]", "[1ea]", "[1.]",
        "[.123]", "[1.2a-3]", "[012]", "00", "-", "1e", "01",
        // objects
        "[\"x\", truth]", "{[: \"x\"}", "{\"x\", null}", "{\"x\"::\"b\"}", "{🇨🇭}", "{\"a\":\"a\" 123}",
        "{key: 'value'}", "{\"a\" b}", "{:\"b\"}", "{\"a\" \"b\"}", "{\"a\":", "{\"a\"", "{1:1}",
        "{null:null,null:null}",
        "{\"id\":0,,,,,}", "{'a':0}", "{\"id\":0,}", "{\"a\":\"b\"}/**/", "{\"a\":\"b\"}//",
        "{\"a\":\"b\",,\"c\":\"d\"}",
        "{a: \"b\"}", "{\"a\":\"a", "{ \"foo\" : \"bar\", \"a\" }", "{\"a\":\"b\"}#",
        // strings
        " ", "[\"\\uD800\\\"]", "[\"\\uD800\\u\"]", "[\"\\uD800\\u1\"]", "[\"\\uD800\\u1x\"]", "[é]", "[\"\\x00\"]",
        "[\"\\\\\\\"]", "[\"\\\t\"]", "[\"\\🌀\"]", "[\"\\\"]", "[\"\\u00A\"]", "[\"\\uD834\\uDd\"]",
        "[\"\\uD800\\uD800\\x\"]", "[\"\\a\"]", "[\"\\uqqqq\"]", "[\\u0020\"asd\"]", "[\\n]", "\"", "['single quote']",
        "abc", "[\"\\", "[\"a\u{0}a\"]", "[\"new\nline\"]", "[\"\t\"]", "\"\\UA66D\"", "\"\"x",
        // i_ cases decided here: unpaired surrogate escapes are rejected (they cannot become Swift text)
        "[\"\\uD800\"]", "[\"\\uDFAA\"]", "[\"\\uD888\\u1234\"]", "[\"\\uDd1ea\"]", "[\"\\uD800\\uD800\"]",
        // structure
        "<.>", "[<null>]", "[1]x", "[1]]", "[\"asd]", "aå", "[True]", "1]", "{\"x\": true,", "[][]", "]", "[", "",
        "[\u{0}]", "2@", "{}}", "{\"\":", "{\"a\":/*comment*/\"b\"}", "{\"a\": true} \"x\"", "['", "[,", "[{", "[\"a",
        "[\"a\"", "{", "{]", "{,", "{[", "{\"a", "{'a'", "[\"\\{[\"\\{[\"\\{[\"\\{", "*", "{\"a\":\"b\"}#{}",
        "[\u{2060}]", "[\\u000A\"\"]", "[1", "[ false, nul", "[ true, fals", "[ false, tru", "{\"asd\":\"asd\"", "å",
        "[\u{0C}]", "\u{FEFF}{}", "[\"a\"]\u{0}",
        // nesting beyond the limit
        String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
        String(repeating: "{\"a\":", count: 513) + "1" + String(repeating: "}", count: 513),
    ]

    /// Byte sequences that are not well-formed UTF-8 (JSONTestSuite n_/i_ invalid UTF-8 cases), all rejected.
    static let rejectedBytes: [[UInt8]] = [
        [0x5B, 0x61, 0xE5, 0x5D],  // n_array_a_invalid_utf8
        [0x5B, 0xFF, 0x5D],  // n_array_invalid_utf8
        [0x5B, 0x22, 0xFF, 0x22, 0x5D],  // i_string_invalid_utf-8
        [0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D],  // i_string_overlong_sequence_2_bytes
        [0x5B, 0x22, 0xE0, 0x80, 0xAF, 0x22, 0x5D],  // overlong 3 bytes
        [0x5B, 0x22, 0xF0, 0x80, 0x80, 0xAF, 0x22, 0x5D],  // overlong 4 bytes
        [0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D],  // i_string_UTF8_surrogate_U+D800
        [0x5B, 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22, 0x5D],  // beyond U+10FFFF
        [0x5B, 0x22, 0xE6, 0x97, 0x22, 0x5D],  // i_string_truncated-utf-8
        [0x5B, 0x22, 0x81, 0x22, 0x5D],  // lone continuation byte
        [0x5B, 0x22, 0xC3, 0x22, 0x5D],  // lead byte then quote
        [0x5B, 0x22, 0x5C, 0x75, 0xE5, 0x22, 0x5D],  // n_string_invalid-utf-8-in-escape
        [0x5B, 0x22, 0x5C, 0xE5, 0x22, 0x5D],  // n_string_invalid_utf8_after_escape
        [0xEF, 0xBB, 0x7B, 0x7D],  // n_structure_incomplete_UTF8_BOM
        [0xEF, 0xBB, 0xBF],  // n_structure_UTF8_BOM_no_data
        [0xEF, 0xBB, 0xBF, 0x7B, 0x7D],  // i_structure_UTF-8_BOM_empty_object
        [0xE5],  // n_structure_lone-invalid-utf-8
        [0x22, 0xC3, 0xA9],  // unterminated string ending in valid UTF-8
    ]

    @Test(arguments: accepted)
    func accepts(_ document: String) {
        #expect(acceptance(Array(document.utf8)) == true, "\(document.prefix(80).debugDescription)")
    }

    @Test(arguments: rejected)
    func rejects(_ document: String) {
        #expect(acceptance(Array(document.utf8)) == false, "\(document.prefix(80).debugDescription)")
    }

    @Test(arguments: rejectedBytes)
    func rejectsMalformedUTF8(_ bytes: [UInt8]) {
        #expect(acceptance(bytes) == false, "\(bytes)")
    }

    @Test func acceptsEveryWellFormedUTF8Length() {
        let text = "[\"a é € 𝄞 \u{10FFFF} \u{E000} \u{D7FF} \u{800} \u{80}\"]"
        #expect(acceptance(Array(text.utf8)) == true)
    }

    @Test func deepNestingFailsWithoutCrashing() throws {
        let deep = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        #expect(throws: JSONSyntaxError.self) { try JSONScanner.validate(deep) }
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(deep) }
        let error = try #require(throws: JSONSyntaxError.self) { try JSONScanner.validate(deep) }
        #expect(error.reason == .nestingTooDeep)
        #expect(error.offset == 512)
    }

    @Test func nestingLimitIsExactlyTheMaximum() {
        let limit = JSONScanner.defaultMaxDepth
        let atLimit = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        let overLimit = "[" + atLimit + "]"
        #expect((try? JSONScanner.validate(Array(atLimit.utf8))) != nil)
        #expect((try? JSONValue.parse(atLimit)) != nil)
        #expect((try? JSONScanner.validate(Array(overLimit.utf8))) == nil)
        #expect((try? JSONValue.parse(overLimit)) == nil)
        #expect((try? JSONScanner.validate(Array(atLimit.utf8), maxDepth: 10)) == nil)
    }

    @Test func scannerWindowsAndOddArgumentsStayInBounds() throws {
        let bytes = Array(#"xx{"a":[1,2]}yy"#.utf8)
        try bytes.withUnsafeBytes { buffer in
            var scanner = JSONScanner(buffer, start: 2, end: 13)
            #expect(try scanner.skipValue(depth: -5) == JSONRange(start: 2, end: 13, kind: .object))
            try scanner.expectEnd()
            var clipped = JSONScanner(buffer, start: 2, end: 12)  // the closing brace is outside the window
            #expect(throws: JSONSyntaxError(.unexpectedEnd, at: 12)) { try clipped.skipValue() }
            var outside = JSONScanner(buffer, start: 99, end: -3)
            #expect(outside.peek() == nil)
            #expect(throws: JSONSyntaxError.self) { try outside.skipValue() }
            let deep = Array(String(repeating: "[", count: 600).utf8)
            try deep.withUnsafeBytes { deepBuffer in
                var tooDeep = JSONScanner(deepBuffer, maxDepth: 10_000)  // clamped to 512
                #expect(throws: JSONSyntaxError(.nestingTooDeep, at: 512)) { try tooDeep.skipValue(depth: -100) }
            }
        }
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        #expect(throws: JSONSyntaxError(.unexpectedEnd, at: 0)) { try JSONScanner.validate(empty) }
    }

    @Test func errorsSayWhatAndWhere() throws {
        let cases: [(String, JSONSyntaxError.Reason, Int)] = [
            ("[1,]", .unexpectedByte(UInt8(ascii: "]")), 3),
            ("[01]", .unexpectedByte(UInt8(ascii: "1")), 2),
            ("[\"a\u{1}\"]", .controlCharacterInString, 3),
            ("[\"\\q\"]", .invalidEscape, 2),
            ("[\"\\u12G4\"]", .invalidUnicodeEscape, 6),
            ("[\"\\udc00\"]", .unpairedSurrogate, 2),
            ("[tru]", .invalidLiteral, 4),
            ("[1.]", .invalidNumber, 3),
            ("[1] x", .trailingContent, 4),
            ("[1", .unexpectedEnd, 2),
            ("", .unexpectedEnd, 0),
        ]
        for (text, reason, offset) in cases {
            let error = try #require(throws: JSONSyntaxError.self) { try JSONScanner.validate(Array(text.utf8)) }
            #expect(error.reason == reason, "\(text)")
            #expect(error.offset == offset, "\(text)")
            #expect(!error.description.isEmpty)
        }
    }

    /// Strings are scanned eight bytes at a time (one at a time in the input's last seven): a byte that needs the
    /// byte-by-byte rules is found, and a bad one reported at its own offset, wherever it falls in or across those
    /// words.
    @Test func everyByteOfAStringIsCheckedWhereverItFalls() throws {
        let cases: [(inner: [UInt8], reason: JSONSyntaxError.Reason?)] = [
            ([0x01], .controlCharacterInString), ([0x1F], .controlCharacterInString), ([0x20], nil), ([0x7F], nil),
            ([0x80], .invalidUTF8), ([0xFF], .invalidUTF8), ([0xC3, 0xA9], nil), ([0xC3, 0x28], .invalidUTF8),
            ([0xED, 0xA0, 0x80], .invalidUTF8), ([0xF0, 0x9D, 0x84, 0x9E], nil),
            (Array(#"\n"#.utf8), nil), (Array(#"\""#.utf8), nil), (Array(#"\q"#.utf8), .invalidEscape),
        ]
        for position in 0..<40 {
            for (inner, reason) in cases {
                for tail in [0, 1, 7, 8, 15, 16, 17, 33] {
                    let before = [UInt8](repeating: UInt8(ascii: "a"), count: position)
                    let text = [0x22] + before + inner + [UInt8](repeating: UInt8(ascii: "b"), count: tail) + [0x22]
                    let label = "\(inner) after \(position) bytes, \(tail) before the quote"
                    if let reason {
                        let error = try #require(throws: JSONSyntaxError.self, "\(label)") {
                            try JSONScanner.validate(text)
                        }
                        #expect(error == JSONSyntaxError(reason, at: 1 + position), "\(label)")
                    } else {
                        #expect(try JSONScanner.validate(text) == JSONRange(start: 0, end: text.count, kind: .string))
                    }
                }
            }
            // A quote found at every offset ends the string there; without one the input ends inside it.
            let open = [0x22] + [UInt8](repeating: UInt8(ascii: "a"), count: position)
            #expect(try JSONScanner.validate(open + [0x22]).end == position + 2)
            #expect(throws: JSONSyntaxError(.unexpectedEnd, at: position + 1)) { try JSONScanner.validate(open) }
        }
    }

    @Test func validateReturnsTheValueRange() throws {
        let bytes = Array("  {\"a\":[1,2]}\n".utf8)
        let range = try JSONScanner.validate(bytes)
        #expect(range == JSONRange(start: 2, end: 13, kind: .object))
        #expect(try JSONScanner.validate(Array("\"x\"".utf8)).kind == .string)
        #expect(try JSONScanner.validate(Array("-1.5e3".utf8)).kind == .number)
        #expect(try JSONScanner.validate(Array("true".utf8)).kind == .true)
        #expect(try JSONScanner.validate(Array("false".utf8)).kind == .false)
        #expect(try JSONScanner.validate(Array("null".utf8)).kind == .null)
        #expect(try JSONScanner.validate(Array("[]".utf8)).kind == .array)
    }

    @Test func everyTruncationOfADocumentIsRejected() {
        let document = Array(
            "{\"a\":[1,-2.5e+3,true,false,null,\"x\\u00e9\\ud83d\\ude00\\n\"],\"b\":{\"c\":\"é𝄞\"},\"d\":0}".utf8
        )
        #expect(acceptance(document) == true)
        for length in 0..<document.count {
            let prefix = Array(document[..<length])
            // A prefix can only be valid when it is itself a complete value, which none of these is.
            #expect(acceptance(prefix) == false, "prefix \(length)")
        }
    }
}
