/// Low-level appends of JSON text to a byte buffer: quoted strings, integers, constant text.
///
/// Faster than `appendJSONString` of BridgeSystem for event lines: clean runs of a string are copied in one go and
/// eight bytes are checked at a time. Non-ASCII text is copied as UTF-8 (JSON allows it); only `"`, `\` and
/// control characters are escaped, the short forms `\b \f \n \r \t` where they exist and `\u00XX` otherwise
/// (the same output as JavaScript's `JSON.stringify`).
public enum JSONOutput {
    /// Appends `text` as a JSON string literal, quotes included.
    @inline(__always)
    public static func appendQuoted(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { appendQuoted(utf8: $0, to: &bytes) }
    }

    /// Appends UTF-8 `text` as a JSON string literal, quotes included.
    public static func appendQuoted(utf8 text: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        guard let base = text.baseAddress, text.count > 0 else {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        let count = text.count
        var index = 0
        var runStart = 0
        while index < count {
            if index &+ 8 <= count {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
                let lanes = escapeLanes(word)
                if lanes == 0 {
                    index &+= 8
                    continue
                }
                index &+= lanes.trailingZeroBitCount &>> 3
            } else {
                let byte = base[index]
                if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                    index &+= 1
                    continue
                }
            }
            // base[index] needs escaping: flush the clean run before it.
            if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: index &- runStart)) }
            appendEscape(base[index], to: &bytes)
            index &+= 1
            runStart = index
        }
        if runStart < count { bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: count &- runStart)) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// High bit set in each lane of `word` holding `"`, `\` or a byte below 0x20 (the first flagged lane is exact).
    @inline(__always)
    static func escapeLanes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let quoteLanes = (quotes &- ones) & ~quotes
        let backslashLanes = (backslashes &- ones) & ~backslashes
        let controlLanes = (word &- ones &* 0x20) & ~word
        return (quoteLanes | backslashLanes | controlLanes) & 0x8080_8080_8080_8080
    }

    private static func appendEscape(_ byte: UInt8, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            bytes.append(UInt8(ascii: "u"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(UInt8(ascii: "0"))
            bytes.append(hex.utf8Start[Int(byte &>> 4)])
            bytes.append(hex.utf8Start[Int(byte & 0x0F)])
        }
    }

    /// Appends the bytes of a constant (event-line punctuation and field names).
    @inline(__always)
    public static func appendLiteral(_ text: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends the decimal digits of `value` (with `-` when negative).
    public static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        var magnitude = value.magnitude
        // 20 digits hold UInt64.max; fill from the right, then copy the used part.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 21) { digits in
            var position = 21
            repeat {
                position &-= 1
                digits[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                position &-= 1
                digits[position] = UInt8(ascii: "-")
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[position..<21]))
        }
    }

    /// Appends raw bytes (already valid JSON) unchanged.
    @inline(__always)
    public static func appendRaw(_ raw: UnsafeRawBufferPointer, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: raw)
    }
}
