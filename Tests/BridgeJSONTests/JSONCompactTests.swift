import BridgeJSON
import Testing

/// `JSONRange.isCompact(in:)` says whether a value's bytes are what its tree serialises to, which lets REST items go
/// into event lines from their bytes (issue 23, item 3). It must agree with the tree on every input.
@Suite struct JSONCompactTests {
    private func isCompact(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard let range = try? JSONScanner.validate(bytes) else { return false }
        return bytes.withUnsafeBytes { range.isCompact(in: $0) }
    }

    private func serializesToItself(_ text: String) -> Bool {
        (try? JSONValue.parse(text))?.serializedString() == text
    }

    @Test func whatDirectusWritesIsCompact() {
        for text in [
            #"{"id":1,"title":"café ☕ 😀","n":1e400,"z":-0,"f":-0.0e-0,"nested":{"a":[1,{"b":null}],"t":true}}"#,
            #"{"ctl":"a\u0001\u001f\n\t\b\f\r\"\\","del":"\#u{7F}","empty":{},"list":[],"s":""}"#,
            #"[1,"two",[3],{"4":false}]"#, #""text""#, "12345678901234567890", "null",
        ] {
            #expect(isCompact(text), "\(text)")
            #expect(serializesToItself(text), "\(text)")
        }
    }

    @Test func whitespaceOtherEscapesAndRepeatedNamesAreNot() {
        for text in [
            #"{ "id":1}"#, #"{"id" :1}"#, #"{"id": 1}"#, #"{"id":1 }"#, #"[1, 2]"#, "[\n1]",
            #""caf\u00e9""#, #""\u00E9""#, #""\/""#, #""\u0008""#, #""\u000a""#, #""\u001F""#, #""\ud83d\ude00""#,
            #"{"a":1,"a":2}"#, #"{"x":{"a":1,"b":2,"a":3}}"#,
            "{" + (0..<40).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + #","k7":0}"#,
        ] {
            #expect(!isCompact(text), "\(text)")
            #expect(!serializesToItself(text), "\(text)")
        }
    }

    /// Every value built from these parts: compact exactly when its tree writes it back byte for byte.
    @Test func isCompactAgreesWithTheTree() {
        let scalars = [#""a""#, #""\u00e9""#, #""é""#, #""\n""#, "1e400", "-0", "null", #""\/""#, " 2"]
        let names = [#""a""#, #""b""#, #""\u0061""#, #""\t""#]
        var texts: [String] = []
        for first in scalars {
            for second in scalars {
                texts.append("[\(first),\(second)]")
                for name in names {
                    for other in names { texts.append("{\(name):\(first),\(other):{\(name):[\(second)]}}") }
                }
            }
        }
        for text in texts where JSONScanner.isValid(Array(text.utf8)) {
            #expect(isCompact(text) == serializesToItself(text), "\(text)")
        }
    }

    @Test func anObjectIsWrittenWithoutOneMember() throws {
        let bytes = Array(#"{"id":7,"title":"t","nested":{"id":1},"id2":2}"#.utf8)
        let range = try JSONScanner.validate(bytes)
        for (name, expected) in [
            ("id", #"{"title":"t","nested":{"id":1},"id2":2}"#),
            ("id2", #"{"id":7,"title":"t","nested":{"id":1}}"#),
            ("title", #"{"id":7,"nested":{"id":1},"id2":2}"#),
            ("none", #"{"id":7,"title":"t","nested":{"id":1},"id2":2}"#),
        ] {
            var output: [UInt8] = []
            bytes.withUnsafeBytes { range.appendCompact(in: $0, omitting: name, to: &output) }
            #expect(String(decoding: output, as: UTF8.self) == expected)
        }
    }
}
