// Turning scanned strings into Swift text. Escape-free strings (almost all of them) are one UTF-8 copy; escaped
// ones are decoded in a second pass over bytes the scanner has already validated.
extension JSONScanner {
    /// Validates the string whose opening quote is at `index` and returns its decoded text.
    mutating func readString() throws(JSONSyntaxError) -> String {
        let contentStart = index &+ 1
        let hasEscapes = try scanString()
        return Self.text(base: base, from: contentStart, to: index &- 1, hasEscapes: hasEscapes)
    }

    /// Validates the string at `index` and reports whether its decoded text equals the UTF-8 bytes of `name`
    /// (compared byte for byte: JSON keys are not Unicode-normalised).
    mutating func readStringEquals(_ name: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> Bool {
        let contentStart = index &+ 1
        let hasEscapes = try scanString()
        let contentEnd = index &- 1
        if !hasEscapes {
            let length = contentEnd &- contentStart
            guard length == name.count else { return false }
            guard length > 0, let nameBase = name.baseAddress else { return true }
            return memoryEqual(base + contentStart, nameBase, length)
        }
        let text = Self.text(base: base, from: contentStart, to: contentEnd, hasEscapes: true)
        return text.utf8.elementsEqual(name)
    }

    /// The text of string contents `from..<to` (between the quotes), which the scanner has validated.
    static func text(base: UnsafePointer<UInt8>, from start: Int, to end: Int, hasEscapes: Bool) -> String {
        let length = end &- start
        guard length > 0 else { return "" }
        let raw = UnsafeBufferPointer(start: base + start, count: length)
        guard hasEscapes else { return String(decoding: raw, as: UTF8.self) }
        // Every escape is at least as long as the UTF-8 it stands for, so `length` bytes are always enough.
        return String(
            unsafeUninitializedCapacity: length,
            initializingUTF8With: { output in
                var read = 0
                var written = 0
                while read < length {
                    let byte = raw[read]
                    guard byte == UInt8(ascii: "\\"), read &+ 1 < length else {
                        output[written] = byte
                        written &+= 1
                        read &+= 1
                        continue
                    }
                    let escaped = raw[read &+ 1]
                    read &+= 2
                    let simple: UInt8
                    switch escaped {
                    case UInt8(ascii: "b"): simple = 0x08
                    case UInt8(ascii: "f"): simple = 0x0C
                    case UInt8(ascii: "n"): simple = 0x0A
                    case UInt8(ascii: "r"): simple = 0x0D
                    case UInt8(ascii: "t"): simple = 0x09
                    case UInt8(ascii: "u"):
                        var scalar = quad(raw, at: read)
                        read &+= 4
                        if scalar & 0xFC00 == 0xD800, read &+ 6 <= length {
                            let low = quad(raw, at: read &+ 2)
                            scalar = 0x10000 &+ ((scalar & 0x3FF) &<< 10 | (low & 0x3FF))
                            read &+= 6
                        }
                        written &+= encodeUTF8(scalar, into: output, at: written)
                        continue
                    default: simple = escaped  // `"`, `\`, `/`
                    }
                    output[written] = simple
                    written &+= 1
                }
                return written
            }
        )
    }

    /// Four hex digits at `offset` of validated contents (0 for anything unexpected, never a trap).
    private static func quad(_ raw: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt32 {
        guard offset &+ 4 <= raw.count else { return 0xFFFD }
        var value: UInt32 = 0
        for position in offset..<(offset &+ 4) { value = value &<< 4 | UInt32(hexValue(raw[position]) ?? 0) }
        return value
    }

    /// Writes `scalar` as UTF-8 at `offset`; returns the byte count. Unpaired surrogates become U+FFFD.
    private static func encodeUTF8(_ scalar: UInt32, into output: UnsafeMutableBufferPointer<UInt8>, at offset: Int)
        -> Int
    {
        var value = scalar
        if value & 0xF800 == 0xD800 && value < 0x10000 { value = 0xFFFD }
        // 0xFFFD needs three bytes; it replaces a six-byte escape, so it always fits.
        switch value {
        case 0..<0x80:
            output[offset] = UInt8(value)
            return 1
        case 0x80..<0x800:
            output[offset] = UInt8(0xC0 | value &>> 6)
            output[offset &+ 1] = UInt8(0x80 | value & 0x3F)
            return 2
        case 0x800..<0x10000:
            output[offset] = UInt8(0xE0 | value &>> 12)
            output[offset &+ 1] = UInt8(0x80 | (value &>> 6) & 0x3F)
            output[offset &+ 2] = UInt8(0x80 | value & 0x3F)
            return 3
        default:
            output[offset] = UInt8(0xF0 | value &>> 18)
            output[offset &+ 1] = UInt8(0x80 | (value &>> 12) & 0x3F)
            output[offset &+ 2] = UInt8(0x80 | (value &>> 6) & 0x3F)
            output[offset &+ 3] = UInt8(0x80 | value & 0x3F)
            return 4
        }
    }
}

/// Whether `count` bytes at `lhs` and `rhs` are equal (a tiny memcmp that the optimiser can inline).
@inline(__always)
func memoryEqual(_ lhs: UnsafePointer<UInt8>, _ rhs: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    var offset = 0
    while offset &+ 8 <= count {
        let left = UnsafeRawPointer(lhs + offset).loadUnaligned(as: UInt64.self)
        let right = UnsafeRawPointer(rhs + offset).loadUnaligned(as: UInt64.self)
        if left != right { return false }
        offset &+= 8
    }
    while offset < count {
        if lhs[offset] != rhs[offset] { return false }
        offset &+= 1
    }
    return true
}
