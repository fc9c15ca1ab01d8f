import BridgeJSON
import BridgeSystem
import Foundation
import Testing

/// The CloudEvents envelope (docs/configuration.md "Output format"): attributes, escaping, `data` byte for byte.
@Suite struct CloudEventWriterTests {
    @Test func theContractExampleWrapped() {
        let writer = CloudEventWriter(source: "https://cms.example.com/cms")
        var bytes: [UInt8] = []
        let event = Array(EventLineWriterTests.exampleLine.utf8)
        writer.append(
            id: "act_4711", type: "directus.items.update", subject: "articles/42",
            time: EventLineWriterTests.exampleTime, data: event[...], to: &bytes)
        let expected =
            #"{"specversion":"1.0","id":"act_4711","source":"https://cms.example.com/cms","#
            + #""type":"directus.items.update","subject":"articles/42","time":"2026-12-02T10:15:00.123Z","#
            + #""datacontenttype":"application/json","data":"# + EventLineWriterTests.exampleLine + "}"
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
    }

    @Test func textThatNeedsEscapingStaysValidJSONAndAppendsAfterWhatIsThere() throws {
        let writer = CloudEventWriter(source: "http://h/\"quoted\"\\")
        var bytes = Array("prefix".utf8)
        let data = Array(#"{"k":"v"}"#.utf8)
        let key = "a\"b\\c\n\u{1}✓/"
        writer.append(
            id: "snap_x\"y", type: "directus.items.snapshot",
            subject: CloudEventWriter.subject(collection: "my coll", key: key), time: Timestamp(microsecondsSinceEpoch: 0),
            data: data[...], to: &bytes)
        #expect(bytes.starts(with: Array("prefix".utf8)))
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(bytes.dropFirst(6))) as? [String: Any])
        #expect(object["id"] as? String == "snap_x\"y")
        #expect(object["source"] as? String == "http://h/\"quoted\"\\")
        #expect(object["subject"] as? String == "my coll/" + key)
        #expect(object["time"] as? String == "1970-01-01T00:00:00.000Z")
        #expect((object["data"] as? [String: Any])?["k"] as? String == "v")
        #expect(!bytes.contains(0x0A), "one line")
    }

    @Test func aLargeEventIsCopiedWhole() {
        let writer = CloudEventWriter(source: "http://h")
        let data = Array(("{\"x\":\"" + String(repeating: "y", count: 3 << 20) + "\"}").utf8)
        var bytes: [UInt8] = []
        writer.append(id: "a", type: "t", subject: "c/k", time: .now(), data: data[...], to: &bytes)
        #expect(bytes.count > data.count && bytes.suffix(data.count + 1).elementsEqual(data + [UInt8(ascii: "}")]))
    }
}
