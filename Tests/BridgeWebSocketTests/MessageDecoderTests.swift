import Testing

@testable import BridgeWebSocket

@Suite struct MessageDecoderTests {
    @Test func reassemblesFragmentsWithControlFramesBetweenThemAtEverySplit() throws {
        let stream =
            serverFrame(0x1, Array("Hel".utf8), fin: false) + serverFrame(0x9, [1, 2])
            + serverFrame(0x0, Array("lo ".utf8), fin: false) + serverFrame(0xA, [])
            + serverFrame(0x0, Array("wörld".utf8)) + serverFrame(0x2, [0, 255]) + serverFrame(0x1, [])
        let expected: [Decoded] = [
            .ping([1, 2]), .control(ControlFrame(opcode: .pong, payload: [])), .text("Hello wörld"),
            .binary([0, 255]), .text(""),
        ]
        #expect(try decode([stream]) == expected)
        for offset in 0...stream.count {
            #expect(try decode(split(stream, at: offset)) == expected, "split at \(offset)")
        }
        #expect(try decode(byteByByte(stream)) == expected)
    }

    @Test func aThousandFragmentsMakeOneMessage() throws {
        let text = String(repeating: "abcdefghij", count: 100)
        let bytes = Array(text.utf8)
        var stream: [UInt8] = []
        for index in 0..<1000 {
            stream += serverFrame(index == 0 ? 0x1 : 0x0, [bytes[index]], fin: index == 999)
        }
        #expect(try decode([stream]) == [.text(text)])
    }

    @Test func emptyFragmentsAreAllowed() throws {
        let stream = serverFrame(0x2, [], fin: false) + serverFrame(0x0, [], fin: false) + serverFrame(0x0, [7])
        #expect(try decode([stream]) == [.binary([7])])
    }

    @Test(arguments: [
        (serverFrame(0x0, [1]), "continuation frame without a message"),
        (serverFrame(0x1, [65], fin: false) + serverFrame(0x1, [66]), "new message started"),
        (serverFrame(0x1, [65], fin: false) + serverFrame(0x2, [66]), "new message started"),
        (serverFrame(0x2, [1]) + serverFrame(0x0, [2]), "continuation frame without a message"),
    ])
    func fragmentationViolationsAreProtocolErrors(stream: [UInt8], reason: String) {
        let error = decodeError([stream])
        #expect(error?.closeCode == 1002)
        #expect(error?.reason.contains(reason) == true)
    }

    @Test func invalidUTF8InOneFrameIs1007() {
        #expect(decodeError([serverFrame(0x1, [0x41, 0xC0, 0x80])])?.closeCode == 1007)
    }

    @Test func utf8IsValidatedAcrossFragmentBoundaries() throws {
        let bytes = Array("κόσμε".utf8)
        for cut in 0...bytes.count {
            let stream = serverFrame(0x1, Array(bytes[..<cut]), fin: false) + serverFrame(0x0, Array(bytes[cut...]))
            #expect(try decode([stream]) == [.text("κόσμε")], "cut at \(cut)")
        }
        // A surrogate split over two fragments.
        let bad = serverFrame(0x1, [0x61, 0xED], fin: false) + serverFrame(0x0, [0xA0, 0x80])
        #expect(decodeError([bad])?.closeCode == 1007)
        // A message that ends inside a code point.
        let truncated = serverFrame(0x1, [0x61, 0xE2, 0x82], fin: false) + serverFrame(0x0, [])
        #expect(decodeError([truncated])?.closeCode == 1007)
    }

    @Test func invalidUTF8FailsFastBeforeTheMessageEnds() {
        // Only the first fragment has arrived; it already holds an impossible byte.
        #expect(decodeError([serverFrame(0x1, [0x61, 0xFF], fin: false)])?.closeCode == 1007)
    }

    @Test func binaryMessagesAreNotValidated() throws {
        #expect(try decode([serverFrame(0x2, [0xFF, 0xC0])]) == [.binary([0xFF, 0xC0])])
    }

    @Test func oversizedMessagesAre1009FromTheHeaderAlone() throws {
        let exact = [UInt8](repeating: 1, count: 100)
        #expect(try decode([serverFrame(0x2, exact)], maxMessageSize: 100) == [.binary(exact)])
        // Only the header of a too-big frame has arrived: rejected before its payload is read.
        let header = Array(serverFrame(0x2, [UInt8](repeating: 1, count: 101)).prefix(2))
        #expect(decodeError([header], maxMessageSize: 100)?.closeCode == 1009)
        // Fragments that only together exceed the limit.
        let fragments =
            serverFrame(0x1, [UInt8](repeating: 0x61, count: 60), fin: false)
            + serverFrame(0x0, [UInt8](repeating: 0x61, count: 41))
        #expect(decodeError([fragments], maxMessageSize: 100)?.closeCode == 1009)
    }

    /// A decoder that skips oversized messages (the Directus connection's: a subscription's `init` over the limit
    /// came again after every reconnect, so the 1009 closed the socket for good) reads past them whole, fragments,
    /// control frames between them and every split of the input included, keeps none of their bytes, and goes on.
    @Test func oversizedMessagesAreReadPastWhenSkipping() throws {
        let big = [UInt8](repeating: 0x61, count: 150)
        let stream =
            serverFrame(0x1, [0x31]) + serverFrame(0x1, big) + serverFrame(0x1, [0x32])
            + serverFrame(0x2, Array(big.prefix(60)), fin: false) + serverFrame(0x9, [7])
            + serverFrame(0x0, Array(big.prefix(41)), fin: false) + serverFrame(0x0, [], fin: false)
            + serverFrame(0x0, [0xFF]) + serverFrame(0x1, [0x33])
        let expected: [Decoded] = [.text("1"), .skipped(150), .text("2"), .ping([7]), .skipped(102), .text("3")]
        #expect(try decode([stream], maxMessageSize: 100, skipsOversized: true) == expected)
        for offset in 0...stream.count {
            #expect(
                try decode(split(stream, at: offset), maxMessageSize: 100, skipsOversized: true) == expected,
                "split at \(offset)")
        }
        #expect(try decode(byteByByte(stream), maxMessageSize: 100, skipsOversized: true) == expected)
        // Without skipping, the same stream is a 1009 as before.
        #expect(decodeError([stream], maxMessageSize: 100)?.closeCode == 1009)
        // A continuation claiming 2^63 - 1 bytes after a fragment within the limit: counted without overflowing.
        let claim = serverFrame(0x1, [0x61], fin: false) + [0x80, 127, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        #expect(try decode([claim], maxMessageSize: 100, skipsOversized: true) == [])
    }

    @Test func stopsAtTheMessageLimitAndResumes() throws {
        let stream = serverFrame(0x1, [0x61]) + serverFrame(0x1, [0x62]) + serverFrame(0x1, [0x63])
        var decoder = MessageDecoder(maxMessageSize: 100)
        var messages: [WebSocketMessage] = []
        try stream.withUnsafeBytes { bytes in
            var offset = 0
            _ = try decoder.decode(bytes, offset: &offset, into: &messages, limit: 2)
            #expect(messages.count == 2)
            #expect(offset == 6)
            _ = try decoder.decode(bytes, offset: &offset, into: &messages, limit: 3)
            #expect(offset == 9)
        }
        #expect(messages == [.text([0x61]), .text([0x62]), .text([0x63])])
        #expect(decoder.isIdle)
    }
}
