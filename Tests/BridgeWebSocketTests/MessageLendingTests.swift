import Testing

@testable import BridgeWebSocket

/// Messages lent by `MessageDecoder.decode(_:offset:limit:visit:)` and `WebSocketConnection.receive`: a whole
/// frame in one read where it lies in the input, anything else from an assembled copy, text validated either way.
@Suite struct MessageLendingTests {
    /// What one lent message was: its bytes, and where it lay relative to the input (nil: outside it).
    private struct Lent: Equatable {
        var bytes: [UInt8]
        var isText: Bool
        var offsetInInput: Int?
    }

    /// Decodes `input` from `offset`, recording each lent message; `stopAfter` makes `visit` return false.
    private func lend(
        _ decoder: inout MessageDecoder,
        _ input: [UInt8],
        offset: inout Int,
        stopAfter: Int = .max
    ) throws -> [Lent] {
        var lent: [Lent] = []
        try input.withUnsafeBytes { buffer in
            let start = buffer.baseAddress!
            let control = try decoder.decode(buffer, offset: &offset) { message in
                let address = message.bytes.baseAddress!
                let inside = address >= start && address < start + buffer.count
                lent.append(
                    .init(
                        bytes: Array(message.bytes),
                        isText: message.isText,
                        offsetInInput: inside ? start.distance(to: address) : nil
                    )
                )
                return lent.count < stopAfter
            }
            #expect(control == nil)
        }
        return lent
    }

    @Test func wholeFramesInOneReadAreLentWhereTheyLie() throws {
        let text = serverFrame(0x1, Array("hello".utf8))
        let binary = serverFrame(0x2, [UInt8](repeating: 7, count: 300))  // a 16-bit length: a 4-byte header
        var decoder = MessageDecoder(maxMessageSize: 1 << 20)
        var offset = 0
        let lent = try lend(&decoder, text + binary, offset: &offset)
        #expect(
            lent == [
                Lent(bytes: Array("hello".utf8), isText: true, offsetInInput: 2),
                Lent(bytes: [UInt8](repeating: 7, count: 300), isText: false, offsetInInput: text.count + 4),
            ]
        )
        #expect(offset == text.count + binary.count)
    }

    @Test func aFrameSplitAcrossReadsIsLentFromAnAssembledCopy() throws {
        let frame = serverFrame(0x1, Array("split across two reads".utf8))
        var decoder = MessageDecoder(maxMessageSize: 1 << 20)
        var offset = 0
        #expect(try lend(&decoder, Array(frame[..<9]), offset: &offset).isEmpty)
        offset = 0
        let lent = try lend(&decoder, Array(frame[9...]), offset: &offset)
        #expect(lent == [Lent(bytes: Array("split across two reads".utf8), isText: true, offsetInInput: nil)])
    }

    @Test func aWholeFrameEndingInsideACodePointIs1007AndNotLent() throws {
        let input = serverFrame(0x1, Array("ok".utf8)) + serverFrame(0x1, [0x41, 0xE2, 0x82])
        var decoder = MessageDecoder(maxMessageSize: 1 << 20)
        var offset = 0
        var lent: [[UInt8]] = []
        let error = #expect(throws: WebSocketProtocolError.self) {
            try input.withUnsafeBytes { buffer in
                _ = try decoder.decode(buffer, offset: &offset) { message in
                    lent.append(Array(message.bytes))
                    return true
                }
            }
        }
        #expect(error?.closeCode == 1007)
        #expect(lent == [Array("ok".utf8)])
    }

    @Test func wholeTextLeftToTheCallerIsLentUncheckedAndItsRefusalIs1007() throws {
        let bad: [UInt8] = [0x41, 0xC0, 0x80]
        let input =
            serverFrame(0x1, Array("ok".utf8)) + serverFrame(0x1, bad) + serverFrame(0x1, Array("after".utf8))
        var decoder = MessageDecoder(maxMessageSize: 1 << 20)
        var offset = 0
        var lent: [[UInt8]] = []
        let error = #expect(throws: WebSocketProtocolError.self) {
            try input.withUnsafeBytes { buffer in
                _ = try decoder.decode(buffer, offset: &offset, checksWholeText: false) {
                    (message) throws(WebSocketProtocolError) in
                    lent.append(Array(message.bytes))
                    guard UTF8Validator.isValid(message.bytes) else { throw .invalidUTF8 }
                    return true
                }
            }
        }
        #expect(error?.closeCode == 1007)
        #expect(lent == [Array("ok".utf8), bad], "the bad frame lent to the caller, nothing after it")
    }

    @Test func textInSeveralPiecesIsCheckedEvenWhenWholeTextIsLeftToTheCaller() throws {
        let frame = serverFrame(0x1, [0x61, 0xC0, 0x80, 0x62])
        let fragments = serverFrame(0x1, [0x61], fin: false) + serverFrame(0x0, [0xFF])
        for reads in [[Array(frame[..<3]), Array(frame[3...])], [fragments]] {
            var decoder = MessageDecoder(maxMessageSize: 1 << 20)
            var lent = 0
            let error = #expect(throws: WebSocketProtocolError.self) {
                for read in reads {
                    var offset = 0
                    try read.withUnsafeBytes { buffer in
                        _ = try decoder.decode(buffer, offset: &offset, checksWholeText: false) { _ in
                            lent += 1
                            return true
                        }
                    }
                }
            }
            #expect(error?.closeCode == 1007)
            #expect(lent == 0, "refused by the decoder before anything was lent")
        }
    }

    @Test func aStoppedDecodeLeavesTheNextFrameInTheInput() throws {
        let first = serverFrame(0x1, Array("first".utf8))
        let input = first + serverFrame(0x1, Array("second".utf8))
        var decoder = MessageDecoder(maxMessageSize: 1 << 20)
        var offset = 0
        #expect(try lend(&decoder, input, offset: &offset, stopAfter: 1).map(\.bytes) == [Array("first".utf8)])
        #expect(offset == first.count)
        #expect(try lend(&decoder, input, offset: &offset).map(\.offsetInInput) == [first.count + 2])
        #expect(offset == input.count)
    }
}
