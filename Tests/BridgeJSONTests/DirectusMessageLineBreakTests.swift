import BridgeJSON
import BridgeSystem
import Testing

/// `DirectusServerMessage.hasLineBreaks`, which lets the socket reader copy a frame's items into event lines without
/// looking for CR or LF: it must be true for a frame with a raw CR or LF anywhere (only whitespace between tokens can
/// hold them), or an event line would be split.
@Suite struct DirectusMessageLineBreakTests {
    static let compact = Array(
        #"{"type":"subscription","event":"update","data":[{"id":42,"t":"a b","n":[1.5,true,null,{}]}],"uid":"a"}"#.utf8
    )

    /// Every offset of `compact` where whitespace may go: next to a structural byte and outside strings.
    static var gaps: [Int] {
        var gaps: [Int] = []
        var inString = false
        let structural = Array("{}[],:".utf8)
        for offset in 0...compact.count {
            let before = offset > 0 ? compact[offset - 1] : UInt8(ascii: "{")
            let after = offset < compact.count ? compact[offset] : UInt8(ascii: "}")
            if !inString && (structural.contains(before) || structural.contains(after)) { gaps.append(offset) }
            if offset < compact.count && compact[offset] == UInt8(ascii: "\"") { inString.toggle() }
        }
        return gaps
    }

    @Test func aLineBreakAnywhereBetweenTokensIsSeenAndOtherWhitespaceIsNot() throws {
        #expect(try !DirectusServerMessage(decoding: Self.compact).hasLineBreaks)
        #expect(Self.gaps.count > 30)
        for gap in Self.gaps {
            for (space, isLineBreak) in [(0x0A, true), (0x0D, true), (0x20, false), (0x09, false)] as [(UInt8, Bool)] {
                var frame = Self.compact
                frame.insert(space, at: gap)
                let message = try DirectusServerMessage(decoding: frame)
                #expect(message.hasLineBreaks == isLineBreak, "byte \(space) at offset \(gap)")
            }
        }
    }

    @Test func itemsAreCopiedAsTheyAreOnlyFromAFrameWithoutLineBreaks() throws {
        let pretty = Array(#"{"type":"subscription","data":[{"id":42,"#.utf8) + [0x0D, 0x0A] + Array(#""t":1}]}"#.utf8)
        for frame in [Self.compact, pretty] {
            let message = try DirectusServerMessage(decoding: frame)
            guard case .array(let items) = message.data, let item = items.first else {
                Issue.record("no item")
                continue
            }
            func line(sourceHasLineBreaks: Bool) -> [UInt8] {
                var line: [UInt8] = []
                var memo = RFC3339Memo()
                frame.withUnsafeBytes { bytes in
                    EventLineWriter.append(
                        Self.fields,
                        data: item,
                        delta: item,
                        in: bytes,
                        sourceHasLineBreaks: sourceHasLineBreaks,
                        newline: true,
                        timeMemo: &memo,
                        to: &line
                    )
                }
                return line
            }
            let fast = line(sourceHasLineBreaks: message.hasLineBreaks)
            let looked = line(sourceHasLineBreaks: true)
            #expect(fast == looked)
            #expect(fast.filter { $0 == 0x0A || $0 == 0x0D } == [0x0A], "one line")
        }
    }

    static let fields = EventLineFields(
        identifier: .text("evt_1"),
        event: .update,
        collection: "posts",
        key: "42",
        origin: .live,
        seq: nil,
        time: Timestamp(microsecondsSinceEpoch: 0),
        receivedAt: Timestamp(microsecondsSinceEpoch: 0),
        subscription: "a",
        user: nil
    )
}
