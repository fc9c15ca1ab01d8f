extension Crypto {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8
    )

    /// 255 for bytes outside the alphabet.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 255, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// Standard base64 (RFC 4648 §4) with `=` padding.
    package static func base64Encode(_ bytes: some Collection<UInt8>) -> String {
        withContiguousBytes(bytes) { input in
            let outputCount = (input.count + 2) / 3 * 4
            return String(unsafeUninitializedCapacity: outputCount) { output in
                var out = 0
                var index = 0
                while index + 3 <= input.count {
                    let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                    output[out] = alphabet[Int(value >> 18 & 63)]
                    output[out + 1] = alphabet[Int(value >> 12 & 63)]
                    output[out + 2] = alphabet[Int(value >> 6 & 63)]
                    output[out + 3] = alphabet[Int(value & 63)]
                    out += 4
                    index += 3
                }
                let rest = input.count - index
                if rest > 0 {
                    let value = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
                    output[out] = alphabet[Int(value >> 18 & 63)]
                    output[out + 1] = alphabet[Int(value >> 12 & 63)]
                    output[out + 2] = rest == 2 ? alphabet[Int(value >> 6 & 63)] : UInt8(ascii: "=")
                    output[out + 3] = UInt8(ascii: "=")
                    out += 4
                }
                return out
            }
        }
    }

    /// Decodes standard base64 with `=` padding (padding may be omitted); `nil` for any other character or
    /// an impossible length. Whitespace is not accepted.
    package static func base64Decode(_ text: String) -> [UInt8]? {
        var utf8 = Array(text.utf8)
        var padding = 0
        while padding < 2, utf8.last == UInt8(ascii: "=") {
            utf8.removeLast()
            padding += 1
        }
        // With padding, the padded length is a multiple of 4 and the padding fills exactly the last group.
        if padding > 0 && padding != (4 - utf8.count % 4) % 4 { return nil }
        if utf8.count % 4 == 1 { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(utf8.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in utf8 {
            let value = decodeTable[Int(byte)]
            if value == 255 { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero, or the text was not produced by an encoder (RFC 4648 §3.5).
        if bits > 0 && accumulator & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return output
    }
}
