/// Reading response header lines as curl hands them over (`Name: value\r\n`, one at a time), without curl: pure
/// functions over the line's bytes, so the `http-headers` fuzz target runs exactly what the transfers run.
package enum HTTPHeaderLine {
    /// Whether header line `line` (`Name: value`) names one of `names` (lower-case ASCII), without allocating.
    package static func line(_ line: UnsafeRawBufferPointer, namesOneOf names: [[UInt8]]) -> Bool {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return false }
        return names.contains { equalsIgnoringASCIICase(line[..<colon], $0) }
    }

    /// Whether `bytes` equal `lowercased` ignoring ASCII case (header names are ASCII tokens).
    package static func equalsIgnoringASCIICase(_ bytes: some Collection<UInt8>, _ lowercased: [UInt8]) -> Bool {
        guard bytes.count == lowercased.count else { return false }
        return zip(bytes, lowercased).allSatisfy { byte, expected in
            (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) == expected
        }
    }

    /// Splits `Name: value\r\n` into a lower-cased name and a trimmed value; nil for the blank end line or
    /// a line without a colon.
    package static func parse(_ line: UnsafeRawBufferPointer) -> (name: String, value: String)? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return nil }
        var nameBytes = [UInt8](line[..<colon])
        for index in nameBytes.indices where nameBytes[index] >= 0x41 && nameBytes[index] <= 0x5A {
            nameBytes[index] |= 0x20  // ASCII lower case; header names are tokens
        }
        var start = colon + 1
        var end = line.count
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        while start < end && isSpace(line[start]) { start += 1 }
        while end > start && isSpace(line[end - 1]) { end -= 1 }
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: line[start..<end]), as: UTF8.self)
        return (String(decoding: nameBytes, as: UTF8.self), value)
    }
}
