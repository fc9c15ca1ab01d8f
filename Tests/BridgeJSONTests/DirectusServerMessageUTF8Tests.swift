import BridgeJSON
import Testing

/// What the socket reader relies on to leave a text frame's UTF-8 check (RFC 6455 §8.1) to the decoder: a frame with
/// bytes that are not UTF-8 is refused as invalid JSON wherever they lie, in the values it decodes and in those it
/// only skips.
@Suite struct DirectusServerMessageUTF8Tests {
    /// A subscription frame with every kind of place a string can be; `@` marks where the bytes under test go.
    static let template =
        #"{"type":"subscription","event":"create","uid":"s@","data":[{"id":1,"t@":"v@","n":{"k":["@"]}}],"#
        + #""x@":{"y":"@"},"error":{"code":"C@","message":"m@","z":"@"}}"#

    /// How many markers the template has.
    static let places = template.utf8.filter { $0 == UInt8(ascii: "@") }.count

    /// The template with `bytes` at the `place`-th marker and nothing at the others.
    static func frame(with bytes: [UInt8], at place: Int) -> [UInt8] {
        var frame: [UInt8] = []
        var seen = 0
        for byte in template.utf8 {
            guard byte == UInt8(ascii: "@") else {
                frame.append(byte)
                continue
            }
            if seen == place { frame += bytes }
            seen += 1
        }
        return frame
    }

    @Test(
        arguments: [
            [0xFF], [0x80], [0xC0, 0xAF], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0x61, 0xF0, 0x9D, 0x84],
        ] as [[UInt8]]
    )
    func bytesThatAreNotUTF8AreRefusedAsInvalidJSONWhereverTheyLie(bad: [UInt8]) {
        for place in 0..<Self.places {
            let frame = Self.frame(with: bad, at: place)
            let decoded = Result { () throws(DirectusMessageError) in try DirectusServerMessage(decoding: frame) }
            guard case .failure(.invalidJSON(let error)) = decoded else {
                Issue.record("bytes \(bad) at place \(place): \(decoded)")
                continue
            }
            #expect(error.reason == .invalidUTF8, "bytes \(bad) at place \(place)")
        }
    }

    @Test func theSameFramesWithUTF8AreReadAndNonASCIIOutsideStringsIsRefused() throws {
        for place in 0..<Self.places {
            _ = try DirectusServerMessage(decoding: Self.frame(with: Array("\u{E9}\u{1D11E}".utf8), at: place))
        }
        let outside = Array(#"{"type":"ping","#.utf8) + [0xC3, 0xA9] + Array(#""x":1}"#.utf8)
        #expect(throws: DirectusMessageError.invalidJSON(JSONSyntaxError(.unexpectedByte(0xC3), at: 15))) {
            try DirectusServerMessage(decoding: outside)
        }
    }
}
