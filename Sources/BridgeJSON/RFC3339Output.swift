public import BridgeSystem

// Every event line carries two timestamps. `Timestamp.appendRFC3339` (BridgeSystem) goes through `gmtime_r` and
// appends digit by digit, which measured as a fifth of the whole hot path; this computes the civil date with
// integer arithmetic and appends the 24 bytes at once. Output is identical (tested against `Timestamp.rfc3339`).
extension JSONOutput {
    /// Appends `time` as RFC 3339 UTC with milliseconds (`2026-12-02T10:15:00.123Z`), without quotes.
    public static func appendRFC3339(_ time: Timestamp, to bytes: inout [UInt8]) {
        let totalMilliseconds = floorDivide(time.microsecondsSinceEpoch, 1_000)
        let milliseconds = Int(totalMilliseconds - floorDivide(totalMilliseconds, 1_000) * 1_000)
        let seconds = floorDivide(totalMilliseconds, 1_000)
        let days = floorDivide(seconds, 86_400)
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { text in
            let digits = UInt8(ascii: "0")
            let clampedYear = min(max(year, 0), 9_999)  // four digits, as `Timestamp` writes them
            text[0] = digits &+ UInt8(clampedYear / 1_000)
            text[1] = digits &+ UInt8(clampedYear / 100 % 10)
            text[2] = digits &+ UInt8(clampedYear / 10 % 10)
            text[3] = digits &+ UInt8(clampedYear % 10)
            text[4] = UInt8(ascii: "-")
            writeTwoDigits(month, into: text, at: 5)
            text[7] = UInt8(ascii: "-")
            writeTwoDigits(day, into: text, at: 8)
            text[10] = UInt8(ascii: "T")
            writeTwoDigits(secondOfDay / 3_600, into: text, at: 11)
            text[13] = UInt8(ascii: ":")
            writeTwoDigits(secondOfDay / 60 % 60, into: text, at: 14)
            text[16] = UInt8(ascii: ":")
            writeTwoDigits(secondOfDay % 60, into: text, at: 17)
            text[19] = UInt8(ascii: ".")
            text[20] = digits &+ UInt8(milliseconds / 100)
            text[21] = digits &+ UInt8(milliseconds / 10 % 10)
            text[22] = digits &+ UInt8(milliseconds % 10)
            text[23] = UInt8(ascii: "Z")
            bytes.append(contentsOf: UnsafeBufferPointer(text))
        }
    }

    @inline(__always)
    private static func writeTwoDigits(_ value: Int, into text: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        text[offset] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value / 10)
        text[offset &+ 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
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
