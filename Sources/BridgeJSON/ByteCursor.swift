import BridgeSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Writes JSON text through a raw pointer into memory the caller has sized with an upper bound.
///
/// `[UInt8].append` checks uniqueness and capacity on every call, which measured as a large share of writing an
/// event line of a dozen small pieces. The writer instead computes an upper bound and writes every piece here,
/// into the array's spare capacity or a scratch buffer appended in one copy (`appendWriting`). Callers must size
/// the memory: each method documents the most it writes.
struct ByteCursor {
    /// Next byte to write.
    private(set) var pointer: UnsafeMutablePointer<UInt8>

    /// A cursor writing from `start` on.
    init(_ start: UnsafeMutablePointer<UInt8>) {
        pointer = start
    }

    /// Bytes written since `start`.
    func count(from start: UnsafeMutablePointer<UInt8>) -> Int { pointer - start }

    /// Writes one byte.
    @inline(__always)
    mutating func write(_ byte: UInt8) {
        pointer.initialize(to: byte)
        pointer += 1
    }

    /// Moves past `count` bytes that were written through ``pointer`` directly.
    @inline(__always)
    mutating func skip(_ count: Int) {
        pointer += count
    }

    /// Writes a constant (`utf8CodeUnitCount` bytes).
    @inline(__always)
    mutating func write(_ literal: StaticString) {
        let count = literal.utf8CodeUnitCount
        pointer.update(from: literal.utf8Start, count: count)
        pointer += count
    }

    /// Writes raw bytes unchanged (`raw.count` bytes).
    @inline(__always)
    mutating func write(raw: UnsafeRawBufferPointer) {
        guard let base = raw.baseAddress, raw.count > 0 else { return }
        UnsafeMutableRawPointer(pointer).copyMemory(from: base, byteCount: raw.count)
        pointer += raw.count
    }

    /// Writes valid JSON text with its line breaks turned into spaces (`raw.count` bytes). In valid JSON a CR or
    /// LF can only be whitespace between tokens (inside strings they must be escaped), so the value is unchanged,
    /// and an event line stays one NDJSON line even when a peer pretty-prints its answers.
    @inline(__always)
    mutating func write(rawJSON raw: UnsafeRawBufferPointer) {
        let start = pointer
        write(raw: raw)
        // memchr (vectorised in libc) instead of a loop over every byte: most values hold no line break at all.
        Self.replace(0x0A, with: 0x20, from: start, to: pointer)
        Self.replace(0x0D, with: 0x20, from: start, to: pointer)
    }

    /// Replaces every `byte` in `[start, end)` with `replacement`.
    private static func replace(
        _ byte: UInt8,
        with replacement: UInt8,
        from start: UnsafeMutablePointer<UInt8>,
        to end: UnsafeMutablePointer<UInt8>
    ) {
        var next = start
        while next < end, let found = memchr(next, Int32(byte), end - next) {
            let match = found.assumingMemoryBound(to: UInt8.self)
            match.pointee = replacement
            next = match + 1
        }
    }

    /// The most ``writeQuoted(utf8:)`` writes for `count` bytes of text: every byte as `\u00XX`, plus quotes.
    static func quotedBound(_ count: Int) -> Int { count * 6 + 2 }

    /// Writes `text` as a JSON string literal (see ``JSONOutput``): clean runs are copied whole, eight bytes are
    /// checked at a time. At most ``quotedBound(_:)`` bytes.
    mutating func writeQuoted(utf8 text: UnsafeBufferPointer<UInt8>) {
        write(UInt8(ascii: "\""))
        if let base = text.baseAddress {
            let count = text.count
            var index = 0
            var runStart = 0
            while index < count {
                if index &+ 8 <= count {
                    let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
                    let lanes = JSONOutput.escapeLanes(word)
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
                copyRun(base + runStart, index &- runStart)
                writeEscape(base[index])
                index &+= 1
                runStart = index
            }
            copyRun(base + runStart, count &- runStart)
        }
        write(UInt8(ascii: "\""))
    }

    @inline(__always)
    private mutating func copyRun(_ start: UnsafePointer<UInt8>, _ count: Int) {
        guard count > 0 else { return }
        pointer.update(from: start, count: count)
        pointer += count
    }

    /// The escape of one byte that needs it: `\"`, `\\`, the short forms, else `\u00XX` (lowercase hex).
    private mutating func writeEscape(_ byte: UInt8) {
        write(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): write(byte)
        case 0x08: write(UInt8(ascii: "b"))
        case 0x0C: write(UInt8(ascii: "f"))
        case 0x0A: write(UInt8(ascii: "n"))
        case 0x0D: write(UInt8(ascii: "r"))
        case 0x09: write(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            write("u00")
            write(hex.utf8Start[Int(byte &>> 4)])
            write(hex.utf8Start[Int(byte & 0x0F)])
        }
    }

    /// The most ``writeDecimal(_:)`` writes.
    static let decimalBound = 20

    /// Writes the decimal digits of `value`, with `-` when negative (at most 20 bytes).
    mutating func writeDecimal(_ value: Int64) {
        if value < 0 { write(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits = 0
        var probe = magnitude
        repeat {
            digits += 1
            probe /= 10
        } while probe > 0
        var position = digits
        repeat {
            position -= 1
            (pointer + position).initialize(to: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10))
            magnitude /= 10
        } while position > 0
        pointer += digits
    }

    /// The number of bytes ``writeRFC3339(_:)`` writes.
    static let rfc3339Length = 24

    /// Writes `time` as RFC 3339 UTC with milliseconds, `2026-12-02T10:15:00.123Z` (exactly 24 bytes).
    /// Integer arithmetic instead of `gmtime_r`; the output equals `Timestamp.rfc3339` (tested).
    mutating func writeRFC3339(_ time: Timestamp) {
        writeRFC3339(time, sameSecondAs: nil)
    }

    /// Like ``writeRFC3339(_:)``; when `earlier` points at the text of a time in the same second (an event's `time`
    /// and `received_at` usually are), its date and clock digits are copied instead of computed again.
    mutating func writeRFC3339(_ time: Timestamp, sameSecondAs earlier: (text: UnsafePointer<UInt8>, time: Timestamp)?)
    {
        let totalMilliseconds = Self.floorDivide(time.microsecondsSinceEpoch, 1_000)
        let seconds = Self.floorDivide(totalMilliseconds, 1_000)
        let milliseconds = Int(totalMilliseconds - seconds * 1_000)
        let days = Self.floorDivide(seconds, 86_400)
        let secondOfDay = Int(seconds - days * 86_400)
        if let earlier, Self.floorDivide(earlier.time.microsecondsSinceEpoch, 1_000_000) == seconds {
            pointer.update(from: earlier.text, count: 20)  // `YYYY-MM-DDThh:mm:ss.`
            pointer += 20
            write(UInt8(ascii: "0") &+ UInt8(milliseconds / 100))
            writeTwoDigits(milliseconds % 100)
            write(UInt8(ascii: "Z"))
            return
        }
        let (year, month, day) = Self.civilDate(daysSinceEpoch: days)
        let clampedYear = min(max(year, 0), 9_999)  // four digits, as `Timestamp` writes them
        writeTwoDigits(clampedYear / 100)
        writeTwoDigits(clampedYear % 100)
        write(UInt8(ascii: "-"))
        writeTwoDigits(month)
        write(UInt8(ascii: "-"))
        writeTwoDigits(day)
        write(UInt8(ascii: "T"))
        writeTwoDigits(secondOfDay / 3_600)
        write(UInt8(ascii: ":"))
        writeTwoDigits(secondOfDay / 60 % 60)
        write(UInt8(ascii: ":"))
        writeTwoDigits(secondOfDay % 60)
        write(UInt8(ascii: "."))
        write(UInt8(ascii: "0") &+ UInt8(milliseconds / 100))
        writeTwoDigits(milliseconds % 100)
        write(UInt8(ascii: "Z"))
    }

    /// Like ``writeRFC3339(_:)``, copying the text from `memo` when it holds the same time, else writing it and
    /// keeping it there.
    mutating func writeRFC3339(_ time: Timestamp, memo: inout RFC3339Memo) {
        if memo.time == time {
            withUnsafeBytes(of: memo.text) { write(raw: $0) }
            return
        }
        let start = pointer
        writeRFC3339(time)
        withUnsafeMutableBytes(of: &memo.text) {
            $0.copyMemory(from: UnsafeRawBufferPointer(start: start, count: Self.rfc3339Length))
        }
        memo.time = time
    }

    @inline(__always)
    private mutating func writeTwoDigits(_ value: Int) {
        write(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value / 10))
        write(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10))
    }

    @inline(__always)
    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    /// Proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    private static func civilDate(daysSinceEpoch: Int64) -> (year: Int, month: Int, day: Int) {
        let shifted = daysSinceEpoch + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }
}

extension ByteCursor {
    /// Writes a Swift string as a JSON string literal (at most ``quotedBound(_:)`` of its UTF-8 count).
    @inline(__always)
    mutating func writeQuoted(_ text: String) {
        // Native strings lend their UTF-8 directly; only bridged or foreign ones need a contiguous copy.
        if text.utf8.withContiguousStorageIfAvailable({ writeQuoted(utf8: $0) }) == nil {
            var copy = text
            copy.withUTF8 { writeQuoted(utf8: $0) }
        }
    }
}

/// The RFC 3339 text of the last time an event line was written with, kept by a caller that writes many lines of one
/// time (see `EventLineWriter.append(_:data:delta:in:newline:timeMemo:to:)`).
public struct RFC3339Memo: Sendable {
    /// The time whose text `text` holds; nil until the first is written.
    fileprivate var time: Timestamp?
    /// The 24 bytes of `YYYY-MM-DDThh:mm:ss.mmmZ`.
    fileprivate var text: (UInt64, UInt64, UInt64) = (0, 0, 0)

    /// A memo that holds no time yet.
    public init() {}
}
