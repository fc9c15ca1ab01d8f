// String scanning: the hottest loop of the bridge (item bytes are mostly string contents), so it checks eight
// bytes at a time and drops to byte-by-byte work only at a quote, a backslash, a control byte or non-ASCII.
extension JSONScanner {
    /// Scans a string whose opening quote is at `index`; leaves `index` after the closing quote.
    /// Returns whether the string contains escapes (without escapes its bytes are its UTF-8 text).
    @inline(__always)
    mutating func scanString() throws(JSONSyntaxError) -> Bool {
        index &+= 1
        var hasEscapes = false
        while true {
            while index &+ 8 <= count {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
                let special = Self.specialBytes(word)
                if special == 0 {
                    index &+= 8
                    continue
                }
                // Little-endian: the lowest set bit marks the first special byte; any false positives of the bit
                // tricks lie above a true one, so this offset is exact.
                index &+= special.trailingZeroBitCount &>> 3
                break
            }
            guard index < count else { throw JSONSyntaxError(.unexpectedEnd, at: index) }
            let byte = base[index]
            if byte == UInt8(ascii: "\"") {
                index &+= 1
                return hasEscapes
            } else if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                try scanEscape()
            } else if byte < 0x20 {
                throw JSONSyntaxError(.controlCharacterInString, at: index)
            } else if byte >= 0x80 {
                try scanUTF8Sequence()
            } else {
                index &+= 1  // an ordinary byte in the last seven, which the word loop does not cover
            }
        }
    }

    /// High bit set in every byte lane of `word` that is `"`, `\`, below 0x20 or at least 0x80.
    @inline(__always)
    static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let quoteLanes = (quotes &- ones) & ~quotes
        let backslashLanes = (backslashes &- ones) & ~backslashes
        let controlLanes = (word &- ones &* 0x20) & ~word
        return (quoteLanes | backslashLanes | controlLanes | word) & highs
    }

    /// Scans one escape sequence at `index` (on the backslash), pairing `\u` surrogates.
    mutating func scanEscape() throws(JSONSyntaxError) {
        guard index &+ 1 < count else { throw JSONSyntaxError(.unexpectedEnd, at: count) }
        switch base[index &+ 1] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            index &+= 2
        case UInt8(ascii: "u"):
            let unit = try hexQuad(at: index &+ 2)
            if unit & 0xFC00 == 0xD800 {
                // A high surrogate must be followed at once by an escaped low surrogate.
                let next = index &+ 6
                guard next &+ 1 < count, base[next] == UInt8(ascii: "\\"), base[next &+ 1] == UInt8(ascii: "u"),
                    try hexQuad(at: next &+ 2) & 0xFC00 == 0xDC00
                else { throw JSONSyntaxError(.unpairedSurrogate, at: index) }
                index &+= 12
            } else if unit & 0xFC00 == 0xDC00 {
                throw JSONSyntaxError(.unpairedSurrogate, at: index)
            } else {
                index &+= 6
            }
        default:
            throw JSONSyntaxError(.invalidEscape, at: index)
        }
    }

    /// The value of the four hex digits at `offset`.
    @inline(__always)
    func hexQuad(at offset: Int) throws(JSONSyntaxError) -> UInt32 {
        guard offset &+ 4 <= count else { throw JSONSyntaxError(.unexpectedEnd, at: count) }
        var value: UInt32 = 0
        for position in offset..<(offset &+ 4) {
            guard let digit = Self.hexValue(base[position]) else {
                throw JSONSyntaxError(.invalidUnicodeEscape, at: position)
            }
            value = value &<< 4 | UInt32(digit)
        }
        return value
    }

    /// The value of one hex digit, either case.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        if byte &- UInt8(ascii: "0") < 10 { return byte &- UInt8(ascii: "0") }
        let lower = byte | 0x20
        if lower &- UInt8(ascii: "a") < 6 { return lower &- UInt8(ascii: "a") &+ 10 }
        return nil
    }

    /// Checks one multi-byte UTF-8 sequence at `index` (Unicode Table 3-7: no overlongs, no surrogates, ≤ U+10FFFF).
    mutating func scanUTF8Sequence() throws(JSONSyntaxError) {
        let lead = base[index]
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: (length, low) = (3, 0xA0)
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: (length, high) = (3, 0x9F)
        case 0xF0: (length, low) = (4, 0x90)
        case 0xF1...0xF3: length = 4
        case 0xF4: (length, high) = (4, 0x8F)
        default: throw JSONSyntaxError(.invalidUTF8, at: index)
        }
        guard index &+ length <= count else { throw JSONSyntaxError(.invalidUTF8, at: index) }
        let second = base[index &+ 1]
        guard second >= low, second <= high else { throw JSONSyntaxError(.invalidUTF8, at: index) }
        for offset in 2..<max(length, 2) where base[index &+ offset] & 0xC0 != 0x80 {
            throw JSONSyntaxError(.invalidUTF8, at: index)
        }
        index &+= length
    }
}
