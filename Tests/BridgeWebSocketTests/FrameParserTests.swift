import Testing

@testable import BridgeWebSocket

/// Collects parser events with copied payloads.
private func events(_ chunks: [[UInt8]]) throws -> [(FrameHeader?, [UInt8], Bool)] {
    var parser = FrameParser()
    var output: [(FrameHeader?, [UInt8], Bool)] = []
    for chunk in chunks {
        try chunk.withUnsafeBytes { bytes in
            var offset = 0
            while let event = try parser.next(bytes, offset: &offset) {
                switch event {
                case .header(let header): output.append((header, [], false))
                case .payload(let slice, let end): output.append((nil, Array(slice), end))
                }
            }
        }
    }
    return output
}

/// The frames of `chunks` as (header, whole payload).
private func frames(_ chunks: [[UInt8]]) throws -> [(FrameHeader, [UInt8])] {
    var result: [(FrameHeader, [UInt8])] = []
    var current: FrameHeader?
    var payload: [UInt8] = []
    for (header, bytes, end) in try events(chunks) {
        if let header {
            current = header
            payload = []
            continue
        }
        payload += bytes
        if end, let header = current { result.append((header, payload)) }
    }
    return result
}

@Suite struct FrameParserTests {
    @Test(arguments: [0, 1, 125, 126, 127, 65535, 65536, 70000])
    func parsesEveryLengthEncoding(length: Int) throws {
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
        let parsed = try frames([serverFrame(0x2, payload)])
        #expect(parsed.count == 1)
        #expect(parsed[0].0 == FrameHeader(opcode: .binary, payloadLength: length))
        #expect(parsed[0].1 == payload)
    }

    @Test func aSixtyFourBitLengthHeaderSurvivesEverySplit() throws {
        let payload = [UInt8](repeating: 7, count: 65536)
        let bytes = serverFrame(0x2, payload)
        for offset in 1...12 {
            let parsed = try frames(split(bytes, at: offset))
            #expect(parsed.map(\.1) == [payload], "split at \(offset)")
        }
    }

    @Test func everyFrameKindSurvivesEverySplitAndByteByByteFeeding() throws {
        let stream =
            serverFrame(0x1, Array("hello".utf8)) + serverFrame(0x9, [1, 2, 3])
            + serverFrame(0x2, [UInt8](repeating: 9, count: 300)) + serverFrame(0x1, [], fin: false)
            + serverFrame(0x0, Array("x".utf8)) + serverFrame(0xA, []) + serverFrame(0x8, [0x03, 0xE8])
        let expected = try frames([stream])
        #expect(expected.map(\.0.opcode) == [.text, .ping, .binary, .text, .continuation, .pong, .close])
        #expect(expected[3].0.fin == false)
        for offset in 0...stream.count {
            let parsed = try frames(split(stream, at: offset))
            #expect(parsed.map(\.0) == expected.map(\.0), "split at \(offset)")
            #expect(parsed.map(\.1) == expected.map(\.1), "split at \(offset)")
        }
        let single = try frames(byteByByte(stream))
        #expect(single.map(\.1) == expected.map(\.1))
    }

    @Test func payloadSlicesPointIntoTheInput() throws {
        // Zero-copy: a payload that is wholly in the input comes out as one slice of it.
        let bytes = serverFrame(0x2, [UInt8](repeating: 1, count: 200))
        var parser = FrameParser()
        try bytes.withUnsafeBytes { input in
            var offset = 0
            _ = try parser.next(input, offset: &offset)
            guard case .payload(let slice, let end) = try parser.next(input, offset: &offset) else {
                Issue.record("expected a payload")
                return
            }
            #expect(end)
            #expect(slice.baseAddress == input.baseAddress! + 4)
            #expect(slice.count == 200)
        }
    }

    @Test(
        arguments: [
            ([0x80 | 0x40 | 0x1, 0x00], "reserved bits"),  // RSV1
            ([0x80 | 0x20 | 0x1, 0x00], "reserved bits"),  // RSV2
            ([0x80 | 0x10 | 0x2, 0x00], "reserved bits"),  // RSV3
            ([0x83, 0x00], "reserved opcode 3"),
            ([0x87, 0x00], "reserved opcode 7"),
            ([0x8B, 0x00], "reserved opcode 11"),
            ([0x8F, 0x00], "reserved opcode 15"),
            ([0x81, 0x80, 1, 2, 3, 4], "masked frame"),
            ([0x09, 0x00], "fragmented control frame"),
            ([0x88, 0x7E, 0x00, 0x7E], "over 125 bytes"),
            ([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0], "top bit"),
        ] as [([UInt8], String)]
    )
    func headerViolationsAreProtocolErrors(bytes: [UInt8], reason: String) {
        let error = decodeError([bytes + [UInt8](repeating: 0, count: 10)])
        #expect(error?.closeCode == 1002)
        #expect(error?.reason.contains(reason) == true, "\(String(describing: error))")
        // Fail fast: the error is raised as soon as the offending byte arrives, whatever the split.
        for offset in 1..<bytes.count {
            #expect(decodeError(split(bytes, at: offset))?.closeCode == 1002)
        }
    }

    @Test func theFirstByteAloneIsCheckedBeforeTheSecondArrives() {
        var parser = FrameParser()
        #expect(throws: WebSocketProtocolError.self) {
            try [UInt8]([0xC1]).withUnsafeBytes { bytes in
                var offset = 0
                _ = try parser.next(bytes, offset: &offset)
            }
        }
    }
}
