internal import BridgeEvents

/// Parses an HTTP `Retry-After` header: delay seconds, or an HTTP date (RFC 9110 §10.2.3).
///
/// The value comes from a webhook receiver, so nothing in it may trap (docs/RELIABILITY.md, "Wire numbers and
/// traps"): digits are read with saturation, date fields are range-checked before any arithmetic, and the
/// result never exceeds `longest`. The sink's retry policy then clamps it to its longest scheduled delay.
package enum RetryAfter {
    /// The longest delay `parse` returns (100 years of 365.25 days): far beyond any useful retry schedule, and
    /// small enough that adding it to a Unix time in milliseconds cannot overflow.
    package static let longest = Duration.seconds(longestSeconds)
    private static let longestSeconds: Int64 = 3_155_760_000

    /// The delay the header asks for, relative to `now` (Unix seconds), at most `longest`; nil when absent,
    /// negative or unparsable. A date in the past gives zero.
    package static func parse(_ value: String?, now: Int64) -> Duration? {
        guard let trimmed = value?.trimmingWhitespace, !trimmed.isEmpty else { return nil }
        if trimmed.utf8.allSatisfy(\.isASCIIDigit) {
            return .seconds(saturatingValue(of: trimmed.utf8, limit: longestSeconds))
        }
        guard let date = parseHTTPDate(trimmed) else { return nil }
        let (delta, overflow) = date.subtractingReportingOverflow(now)
        if overflow { return now > date ? .zero : longest }
        return .seconds(min(max(0, delta), longestSeconds))
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Unix seconds of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 date
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`) or asctime date (`Sun Nov  6 08:49:37 1994`); nil for anything else,
    /// including a year that is not 2 or 4 digits and fields out of range (day 1–31, 00:00:00–23:59:60).
    package static func parseHTTPDate(_ text: String) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "-" || $0 == "," })
        guard parts.count <= 8 else { return nil }
        var day: Int?
        var month: Int?
        var year: Int?
        var clock: (hour: Int, minute: Int, second: Int)?
        for part in parts {
            if part.contains(":") {
                let fields = part.split(separator: ":", omittingEmptySubsequences: false)
                guard clock == nil, fields.count == 3, let hour = twoDigits(fields[0]),
                    let minute = twoDigits(fields[1]), let second = twoDigits(fields[2]),
                    hour < 24, minute < 60, second <= 60
                else { return nil }
                clock = (hour, minute, second)
            } else if part.utf8.allSatisfy(\.isASCIIDigit) {
                let value = Int(saturatingValue(of: part.utf8, limit: 9999))
                if day == nil && part.count <= 2 {
                    day = value
                } else if year == nil && part.count == 4 {
                    year = value
                } else if year == nil && part.count == 2 {
                    year = value < 70 ? 2000 + value : 1900 + value  // RFC 9110 §5.6.7: two-digit years
                } else {
                    return nil
                }
            } else if part.count == 3, let index = months.firstIndex(of: part.lowercased()) {
                guard month == nil else { return nil }
                month = index + 1
            }
            // Anything else (the weekday, "GMT") carries nothing the date needs.
        }
        guard let day, (1...31).contains(day), let month, let year, let clock else { return nil }
        return daysFromCivil(year: year, month: month, day: day) * 86_400
            + Int64(clock.hour * 3600 + clock.minute * 60 + clock.second)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date; `year` is 0…9999, so nothing overflows.
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return Int64(era * 146_097 + doe - 719_468)
    }

    /// The value of a 1- or 2-digit field.
    private static func twoDigits(_ text: Substring) -> Int? {
        guard (1...2).contains(text.utf8.count), text.utf8.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int(saturatingValue(of: text.utf8, limit: 99))
    }

    /// The decimal value of ASCII digits, or `limit` when it is larger (any number of digits).
    private static func saturatingValue(of digits: some Sequence<UInt8>, limit: Int64) -> Int64 {
        var value: Int64 = 0
        for digit in digits {
            value = value * 10 + Int64(digit &- UInt8(ascii: "0"))
            if value >= limit { return limit }
        }
        return value
    }
}

extension UInt8 {
    fileprivate var isASCIIDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
