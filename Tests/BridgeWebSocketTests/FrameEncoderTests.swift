import Testing

@testable import BridgeWebSocket

/// Parses one masked client frame independently of the parser: (first byte, payload, mask key).
private func unmask(_ frame: [UInt8]) -> (first: UInt8, payload: [UInt8], key: [UInt8])? {
    guard frame.count >= 6, frame[1] & 0x80 != 0 else { return nil }
    var length = Int(frame[1] & 0x7F)
    var offset = 2
    if length == 126 {
        length = Int(frame[2]) << 8 | Int(frame[3])
        offset = 4
    } else if length == 127 {
        length = frame[2..<10].reduce(0) { $0 << 8 | Int($1) }
        offset = 10
    }
    let key = Array(frame[offset..<(offset + 4)])
    let masked = frame[(offset + 4)...]
    guard masked.count == length else { return nil }
    return (frame[0], masked.enumerated().map { $0.element ^ key[$0.offset % 4] }, key)
}

@Suite struct FrameEncoderTests {
    @Test(arguments: [0, 1, 7, 8, 9, 125, 126, 65535, 65536])
    func encodesMaskedFramesOfEveryLengthEncoding(length: Int) throws {
        var encoder = FrameEncoder()
        let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let frame = encoder.encode(opcode: .binary, payload: payload)
        #expect(frame.count == FrameEncoder.frameLength(payloadCount: length))
        let decoded = try #require(unmask(frame))
        #expect(decoded.first == 0x82)
        #expect(decoded.payload == payload)
        let lengthCode = frame[1] & 0x7F
        #expect(lengthCode == (length < 126 ? UInt8(length) : length <= 0xFFFF ? 126 : 127))
    }

    @Test func encodesOpcodesAndFin() throws {
        var encoder = FrameEncoder()
        #expect(try #require(unmask(encoder.encode(opcode: .text, fin: false, payload: [1]))).first == 0x01)
        #expect(try #require(unmask(encoder.encode(opcode: .continuation, payload: [1]))).first == 0x80)
        #expect(try #require(unmask(encoder.encode(opcode: .close, payload: [3, 232]))).first == 0x88)
        #expect(try #require(unmask(encoder.encode(opcode: .pong, payload: []))).first == 0x8A)
    }

    @Test func everyFrameGetsAFreshKey() throws {
        var encoder = FrameEncoder()
        var keys = Set<[UInt8]>()
        for _ in 0..<3000 {  // crosses the 1024-key pool refill twice
            keys.insert(try #require(unmask(encoder.encode(opcode: .text, payload: Array("x".utf8)))).key)
        }
        #expect(keys.count > 2990)  // 32-bit keys: a handful of collisions at most
    }

    @Test func maskingIsItsOwnInverseAtEveryLengthAndAlignment() {
        for length in 0..<40 {
            for shift in 0..<3 {
                let source = (0..<(length + shift)).map { UInt8(truncatingIfNeeded: $0 * 13 + 5) }
                var masked = [UInt8](repeating: 0, count: length)
                var restored = [UInt8](repeating: 0, count: length)
                let key: UInt32 = 0xA1B2_C3D4
                source.withUnsafeBytes { raw in
                    let input = UnsafeRawBufferPointer(rebasing: raw[shift...])
                    masked.withUnsafeMutableBytes { FrameEncoder.mask(input, key: key, into: $0) }
                }
                masked.withUnsafeBytes { input in
                    restored.withUnsafeMutableBytes { FrameEncoder.mask(input, key: key, into: $0) }
                }
                #expect(restored == Array(source[shift...]))
                let keyBytes = withUnsafeBytes(of: key) { Array($0) }
                #expect(
                    masked.enumerated().allSatisfy { $0.element == source[$0.offset + shift] ^ keyBytes[$0.offset % 4] }
                )
            }
        }
    }
}
