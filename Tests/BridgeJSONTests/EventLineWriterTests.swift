import BridgeJSON
import BridgeSystem
import Foundation
import BridgeTestSupport
import Testing

/// The event line: field order, the contract's example byte for byte, escaping.
@Suite struct EventLineWriterTests {
    static let exampleTime = Timestamp(rfc3339: "2026-12-02T10:15:00.123Z")!
    static let exampleReceived = Timestamp(rfc3339: "2026-12-02T10:15:00.125Z")!
    static let exampleFields = EventLineFields(
        identifier: .text("act_4711"),
        event: .update,
        collection: "articles",
        key: "42",
        origin: .live,
        seq: 4711,
        time: exampleTime,
        receivedAt: exampleReceived,
        subscription: "articles"
    )
    static let exampleLine =
        #"{"id":"act_4711","type":"directus.items.update","event":"update","collection":"articles","key":"42","data":{"id":42,"title":"Hello","status":"published"},"origin":"live","seq":4711,"time":"2026-12-02T10:15:00.123Z","received_at":"2026-12-02T10:15:00.125Z","subscription":"articles"}"#

    @Test func contractExampleByteForByte() {
        var writer = EventLineWriter()
        let data = Array(#"{"id":42,"title":"Hello","status":"published"}"#.utf8)
        let range = data.withUnsafeBytes { writer.appendLine(Self.exampleFields, data: $0) }
        #expect(String(decoding: writer.bytes, as: UTF8.self) == Self.exampleLine + "\n")
        #expect(range == 0..<writer.bytes.count)
    }

    @Test func contractExampleFromAFrameRange() throws {
        let frame = Array(
            #"{"type":"subscription","event":"update","data":[{"id":42,"title":"Hello","status":"published"}],"uid":"articles"}"#
                .utf8
        )
        let message = try DirectusServerMessage(decoding: frame)
        guard case .array(let items) = message.data, let item = items.first else {
            Issue.record("no item")
            return
        }
        var fields = Self.exampleFields
        fields.key = try #require(item.member("id", in: frame)?.keyString(in: frame))
        var writer = EventLineWriter()
        writer.appendLine(fields, data: item, in: frame)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == Self.exampleLine + "\n")
    }

    /// A peer (or a proxy) that pretty-prints its JSON puts line breaks between tokens: valid JSON, but copied
    /// byte for byte it would split one event over several NDJSON lines. Found by the directus-message fuzzer.
    @Test func lineBreaksBetweenTokensOfAFrameDoNotSplitTheLine() throws {
        let frame = Array(
            "{\"type\":\"subscription\",\"event\":\"update\",\"data\":[{\"id\":42,\r\n\"title\":\n\"Hello\"\n}],\"uid\":\"a\"}"
                .utf8
        )
        let message = try DirectusServerMessage(decoding: frame)
        guard case .array(let items) = message.data, let item = items.first else {
            Issue.record("no item")
            return
        }
        var writer = EventLineWriter()
        writer.appendLine(Self.exampleFields, data: item, delta: item, in: frame)
        let line = writer.bytes
        #expect(line.last == 0x0A)
        #expect(!line.dropLast().contains(0x0A) && !line.contains(0x0D))
        let object = try #require(JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        #expect((object["data"] as? [String: Any])?["title"] as? String == "Hello")
    }

    @Test func webhookBodyHasNoNewline() {
        var body: [UInt8] = []
        let data = Array(#"{"id":42,"title":"Hello","status":"published"}"#.utf8)
        data.withUnsafeBytes {
            EventLineWriter.append(Self.exampleFields, data: $0, delta: nil, newline: false, to: &body)
        }
        #expect(String(decoding: body, as: UTF8.self) == Self.exampleLine)
    }

    @Test func deleteWithNullDataNullSeqDeltaAndUser() {
        let fields = EventLineFields(
            identifier: .text("evt_0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"),
            event: .delete,
            collection: "articles",
            key: "7",
            origin: .backfill,
            seq: nil,
            time: Timestamp(microsecondsSinceEpoch: 0),
            receivedAt: Timestamp(microsecondsSinceEpoch: 1_000),
            subscription: "articles-del",
            user: "0b3c4d5e-0000-4000-8000-000000000001"
        )
        var writer = EventLineWriter()
        let delta = Array(#"{"status":"archived"}"#.utf8)
        _ = delta.withUnsafeBytes { writer.appendLine(fields, data: nil, delta: $0) }
        let expected =
            #"{"id":"evt_0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","type":"directus.items.delete","event":"delete","collection":"articles","key":"7","data":null,"delta":{"status":"archived"},"origin":"backfill","seq":null,"time":"1970-01-01T00:00:00.000Z","received_at":"1970-01-01T00:00:00.001Z","subscription":"articles-del","user":"0b3c4d5e-0000-4000-8000-000000000001"}"#
        #expect(String(decoding: writer.bytes, as: UTF8.self) == expected + "\n")
    }

    @Test func everyEventAndOrigin() throws {
        for event in EventLineFields.Event.allCases {
            for origin in EventLineFields.Origin.allCases {
                var fields = Self.exampleFields
                fields.event = event
                fields.origin = origin
                fields.seq = -9_223_372_036_854_775_808
                var writer = EventLineWriter()
                writer.appendLine(fields, dataValue: .null)
                let line = try JSONValue.parse(Array(writer.bytes.dropLast()))
                #expect(line["type"]?.stringValue == event.typeName)
                #expect(line["event"]?.stringValue == event.rawValue)
                #expect(line["origin"]?.stringValue == origin.rawValue)
                #expect(line["seq"]?.numberValue?.text == "-9223372036854775808")
                #expect(line["data"] == .null)
            }
        }
    }

    @Test func domValuesAndSeveralLinesInOneBuffer() throws {
        var writer = EventLineWriter(capacity: 16)
        var ranges: [Range<Int>] = []
        for index in 0..<50 {
            var fields = Self.exampleFields
            fields.key = String(index)
            fields.seq = Int64(index)
            ranges.append(
                writer.appendLine(
                    fields,
                    dataValue: ["id": .number(JSONNumber(index)), "s": "é\n"],
                    deltaValue: ["s": "x"]
                )
            )
        }
        #expect(ranges.first?.lowerBound == 0)
        #expect(ranges.last?.upperBound == writer.bytes.count)
        for (index, range) in ranges.enumerated() {
            #expect(writer.bytes[range.upperBound - 1] == UInt8(ascii: "\n"))
            let line = try JSONValue.parse(Array(writer.bytes[range].dropLast()))
            #expect(line["key"]?.stringValue == String(index))
            #expect(line["data"]?["id"]?.int64Value == Int64(index))
            #expect(line["data"]?["s"]?.stringValue == "é\n")
            #expect(line["delta"] == ["s": "x"])
            #expect(
                line.objectValue?.keys == [
                    "id", "type", "event", "collection", "key", "data", "delta", "origin", "seq", "time", "received_at",
                    "subscription",
                ]
            )
        }
        writer.removeAll()
        #expect(writer.bytes.isEmpty)
    }

    @Test func rangesThatDoNotFitAreWrittenAsNull() throws {
        var writer = EventLineWriter()
        let source = Array("[1]".utf8)
        writer.appendLine(Self.exampleFields, data: JSONRange(start: 0, end: 99, kind: .array), in: source)
        let line = try JSONValue.parse(Array(writer.bytes.dropLast()))
        #expect(line["data"] == .null)
    }

    static let awkwardStrings: [String] = [
        "plain", "", "quote\"inside", "back\\slash", "both\\\"", "\u{0}\u{1}\u{8}\u{9}\u{A}\u{B}\u{C}\u{D}\u{1F}\u{7F}",
        "Ünïcödé ✓ 𝄞 \u{2028}\u{2029}", "/slash/", "long run without anything special at all 0123456789",
        "special at the end of a long run 0123456789\"", "\"special at the start of a long run 0123456789",
        "mixed\té \"x\" \\y\n\u{10FFFF}",
    ]

    @Test(arguments: awkwardStrings)
    func stringFieldsAreEscapedAndRoundTrip(_ text: String) throws {
        let fields = EventLineFields(
            identifier: .text(text),
            event: .create,
            collection: text,
            key: text,
            origin: .live,
            seq: 1,
            time: Self.exampleTime,
            receivedAt: Self.exampleReceived,
            subscription: text,
            user: text
        )
        var writer = EventLineWriter()
        writer.appendLine(fields, dataValue: .string(text))
        #expect(writer.bytes.last == UInt8(ascii: "\n"))
        #expect(!writer.bytes.dropLast().contains(UInt8(ascii: "\n")))  // one line, whatever the strings hold
        #expect(!writer.bytes.contains { $0 < 0x20 && $0 != 0x0A })
        let body = Array(writer.bytes.dropLast())
        let line = try JSONValue.parse(body)
        for field in ["id", "collection", "key", "subscription", "user", "data"] {
            #expect(line[field]?.stringValue?.utf8.elementsEqual(text.utf8) == true, "\(field)")
        }
        // Foundation reads the same text back.
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        #expect((object["collection"] as? String)?.utf8.elementsEqual(text.utf8) == true)
    }

    @Test func timestampsMatchBridgeSystemFormatting() {
        var random = SplitMix64(seed: 3339)
        let earliest: Int64 = -62_135_596_800_000_000  // 0001-01-01
        let latest: Int64 = 253_402_300_799_999_999  // 9999-12-31T23:59:59.999999
        var samples: [Int64] = [
            0, -1, -999, -1_000, -1_001, 1_796_206_500_123_456, 951_782_400_000_000, earliest, latest,
        ]
        for _ in 0..<20_000 {
            samples.append(earliest + Int64(bitPattern: random.next() % UInt64(latest - earliest)))
        }
        for micros in samples {
            let time = Timestamp(microsecondsSinceEpoch: micros)
            var bytes: [UInt8] = []
            JSONOutput.appendRFC3339(time, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == time.rfc3339, "\(micros)")
        }
    }

    @Test func extremeTimestampsStayWithinTheirTwentyFourBytes() {
        for micros in [Int64.min, Int64.min + 1, -1, Int64.max, Int64.max - 999] {
            var bytes: [UInt8] = []
            JSONOutput.appendRFC3339(Timestamp(microsecondsSinceEpoch: micros), to: &bytes)
            #expect(bytes.count == 24, "\(micros)")
            #expect(bytes[4] == UInt8(ascii: "-") && bytes[10] == UInt8(ascii: "T") && bytes[23] == UInt8(ascii: "Z"))
        }
    }

    @Test func eventTimesInTheSameOrAnotherSecondAreBothExact() throws {
        var random = SplitMix64(seed: 1234)
        for _ in 0..<2_000 {
            let base = Int64(bitPattern: random.next() % 4_000_000_000_000_000) - 1_000_000_000_000_000
            let time = Timestamp(microsecondsSinceEpoch: base)
            let offsets: [Int64] = [0, 1, 999, 1_000, 999_999, 1_000_000, -1, -1_000_000, 86_400_000_000]
            let received = Timestamp(microsecondsSinceEpoch: base + offsets[Int(random.next() % 9)])
            var fields = Self.exampleFields
            fields.time = time
            fields.receivedAt = received
            var writer = EventLineWriter()
            writer.appendLine(fields, data: nil)
            let line = try JSONValue.parse(Array(writer.bytes.dropLast()))
            #expect(line["time"]?.stringValue == time.rfc3339)
            #expect(line["received_at"]?.stringValue == received.rfc3339)
        }
    }

    @Test func escapesMatchJSONStringify() {
        var bytes: [UInt8] = []
        JSONOutput.appendQuoted("\"\\\u{8}\u{C}\n\r\t\u{0}\u{1F}é/", to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == #""\"\\\b\f\n\r\t\u0000\u001fé/""#)
        bytes.removeAll()
        JSONOutput.appendDecimal(0, to: &bytes)
        bytes.append(32)
        JSONOutput.appendDecimal(Int64.max, to: &bytes)
        bytes.append(32)
        JSONOutput.appendDecimal(Int64.min, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "0 9223372036854775807 -9223372036854775808")
    }

    /// A memo of the last time's text writes the lines written without one: the same time again, another time in
    /// the same second, the next second and day, a time before 1970, and back to the first.
    @Test func timeMemoWritesTheSameLines() {
        let frame = Array(#"{"type":"subscription","event":"create","data":[{"id":1}],"uid":"a"}"#.utf8)
        let item = JSONRange(start: 48, end: 56, kind: .object)
        let base = Self.exampleTime.microsecondsSinceEpoch
        let times = [base, base, base + 1_000, base + 2_000_000, base + 86_400_000_000, -1_500, -1_500, base].map {
            Timestamp(microsecondsSinceEpoch: $0)
        }
        var memo = RFC3339Memo()
        for time in times {
            var fields = Self.exampleFields
            fields.time = time
            fields.receivedAt = time
            var plain: [UInt8] = []
            var memoized: [UInt8] = []
            frame[item.offsets].withUnsafeBytes {  // the raw-bytes form keeps no memo
                EventLineWriter.append(fields, data: $0, delta: nil, newline: true, to: &plain)
            }
            EventLineWriter.append(
                fields, data: item, delta: nil, in: frame, newline: true, timeMemo: &memo, to: &memoized)
            #expect(String(decoding: memoized, as: UTF8.self) == String(decoding: plain, as: UTF8.self))
            #expect(String(decoding: plain, as: UTF8.self).contains(#""time":"\#(time.rfc3339)""#))
        }
    }

    /// Random strings with specials at every position (the eight-byte fast path and its tail) decode back exactly.
    @Test func randomStringsRoundTrip() throws {
        var random = SplitMix64(seed: 42)
        let pool: [Unicode.Scalar] = ["a", "b", " ", "\"", "\\", "\n", "\u{1}", "\u{1F}", "é", "€", "𝄞", "/", "~"]
        for _ in 0..<2_000 {
            var text = ""
            for _ in 0..<(random.next() % 40) {
                text.unicodeScalars.append(pool[Int(random.next() % UInt64(pool.count))])
            }
            var bytes: [UInt8] = []
            JSONOutput.appendQuoted(text, to: &bytes)
            let parsed = try JSONValue.parse(bytes)
            #expect(parsed.stringValue?.utf8.elementsEqual(text.utf8) == true)
        }
    }
}
