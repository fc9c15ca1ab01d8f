import BridgeTestSupport
import Testing

@testable import BridgeWebSocket

private func validate(_ pieces: [[UInt8]]) -> Bool {
    var validator = UTF8Validator()
    for piece in pieces {
        guard piece.withUnsafeBytes({ validator.validate($0) }) else { return false }
    }
    return validator.isComplete
}

@Suite struct UTF8ValidatorTests {
    static let valid: [[UInt8]] = [
        [], Array("a".utf8), Array("κόσμε".utf8), [0x7F], [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80],
        [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBD], [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80],
        [0xF4, 0x8F, 0xBF, 0xBF], Array("Hello-µ@ßöäüàá-UTF-8!!".utf8),
    ]

    static let invalid: [[UInt8]] = [
        [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xED, 0xA0, 0x80],
        [0xED, 0xBF, 0xBF], [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80],
        [0xF5, 0x80, 0x80, 0x80], [0xFE], [0xFF], [0xC2], [0xE0, 0xA0], [0xF0, 0x90, 0x80], [0xC2, 0x41],
        Array("κόσμε".utf8) + [0xED, 0xA0, 0x80] + Array("edited".utf8),  // Autobahn 6.3.1
    ]

    @Test(arguments: valid)
    func acceptsValidText(bytes: [UInt8]) {
        #expect(validate([bytes]))
        for offset in 0...bytes.count { #expect(validate(split(bytes, at: offset)), "split at \(offset)") }
        #expect(validate(byteByByte(bytes)))
    }

    @Test(arguments: invalid)
    func rejectsInvalidTextWhereverItIsSplit(bytes: [UInt8]) {
        #expect(!validate([bytes]))
        for offset in 0...bytes.count { #expect(!validate(split(bytes, at: offset)), "split at \(offset)") }
        #expect(!validate(byteByByte(bytes)))
    }

    @Test func failsFastAtTheFirstBadByte() {
        // The bad byte is in the first piece: the first piece alone is already rejected.
        var validator = UTF8Validator()
        let first: [UInt8] = Array("κόσμε".utf8) + [0xED, 0xA0]
        #expect(!first.withUnsafeBytes { validator.validate($0) })
    }

    @Test func theASCIIFastPathHandsOverAtEveryPosition() {
        for position in 0..<24 {
            var good = [UInt8](repeating: 0x61, count: 24)
            good.replaceSubrange(position..<(position + 1), with: [0xC3, 0xA9])
            #expect(validate([good]), "é at \(position)")
            var bad = [UInt8](repeating: 0x61, count: 24)
            bad[position] = 0xFF
            #expect(!validate([bad]), "0xFF at \(position)")
        }
    }

    @Test func agreesWithTheStandardLibraryOnRandomBytes() {
        var generator = SplitMix64(seed: 6455)
        for _ in 0..<20_000 {
            let length = Int(generator.next() % 9)
            let bytes = (0..<length).map { _ -> UInt8 in
                // Mostly high bytes, where the interesting cases are.
                let value = UInt8(truncatingIfNeeded: generator.next())
                return value < 0x30 ? value & 0x7F : value | 0x80
            }
            let expected = String(validating: bytes, as: UTF8.self) != nil
            #expect(validate([bytes]) == expected, "\(bytes)")
        }
    }
}
