import BridgeTestSupport
import BridgeJSON
import BridgeSystem
import Testing

/// A live event's id held as its UUID: the same text, line and equality as the id written out.
@Suite struct EventIdentifierTests {
    static let uuid = UUIDv7(milliseconds: 0x0190_A1B2_C3D4, randA: 0x0E5F, randB: 0x0A9B_0C1D_2E3F_4A5B)
    static let text = "evt_0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"

    @Test func liveIDRendersAsEvtAndTheUUID() {
        let id = EventIdentifier.live(Self.uuid)
        #expect(id.description == Self.text)
        #expect(id.utf8Count == Self.text.utf8.count)
        #expect(EventIdentifier.text("act_4711").utf8Count == 8)
    }

    @Test func equalAndHashedByText() {
        let live = EventIdentifier.live(Self.uuid)
        #expect(live == .text(Self.text))
        #expect(EventIdentifier.text(Self.text) == live)
        #expect(live.hashValue == EventIdentifier.text(Self.text).hashValue)
        #expect(live != .live(UUIDv7(high: Self.uuid.high, low: Self.uuid.low &+ 1)))
        #expect(live != .text("evt_other"))
    }

    @Test func lineWithALiveIDEqualsTheLineWithItsText() {
        let time = Timestamp(rfc3339: "2026-12-02T10:15:00.123Z")!
        func fields(_ identifier: EventIdentifier) -> EventLineFields {
            EventLineFields(
                identifier: identifier, event: .create, collection: "articles", key: "42", origin: .live, seq: nil,
                time: time, receivedAt: time, subscription: "articles")
        }
        let data = Array(#"{"id":42}"#.utf8)
        var live = EventLineWriter()
        var text = EventLineWriter()
        data.withUnsafeBytes {
            live.appendLine(fields(.live(Self.uuid)), data: $0)
            text.appendLine(fields(.text(Self.text)), data: $0)
        }
        #expect(live.bytes == text.bytes)
        #expect(String(decoding: live.bytes, as: UTF8.self).hasPrefix(#"{"id":"\#(Self.text)","type":"#))
        #expect(fields(.live(Self.uuid)).id == Self.text)
        #expect(fields(.live(Self.uuid)) == fields(.text(Self.text)))
    }

    @Test func settingTheTextReplacesTheUUID() {
        var fields = EventLineFields(
            identifier: .live(Self.uuid), event: .delete, collection: "c", key: "1", origin: .live, seq: nil,
            time: Timestamp(microsecondsSinceEpoch: 0), receivedAt: Timestamp(microsecondsSinceEpoch: 0),
            subscription: "s")
        fields.id = "act_9"
        #expect(fields.identifier == .text("act_9"))
        #expect(fields.id == "act_9")
    }
}
