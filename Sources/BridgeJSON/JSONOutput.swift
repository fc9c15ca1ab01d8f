public import BridgeSystem

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
        bytes.appendWriting(bound: ByteCursor.quotedBound(text.count)) { $0.writeQuoted(utf8: text) }
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

    /// Appends the bytes of a constant (event-line punctuation and field names).
    @inline(__always)
    public static func appendLiteral(_ text: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends the decimal digits of `value` (with `-` when negative).
    public static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        bytes.appendWriting(bound: ByteCursor.decimalBound) { $0.writeDecimal(value) }
    }

    /// Appends `time` as RFC 3339 UTC with milliseconds (`2026-12-02T10:15:00.123Z`), without quotes: the same text
    /// as `Timestamp.appendRFC3339`, computed without `gmtime_r` (see ``ByteCursor``).
    public static func appendRFC3339(_ time: Timestamp, to bytes: inout [UInt8]) {
        bytes.appendWriting(bound: ByteCursor.rfc3339Length) { $0.writeRFC3339(time) }
    }
}
