/// Parses an HTTP `Retry-After` header: delay seconds, or an HTTP date (RFC 9110 §10.2.3).
package enum RetryAfter {
    /// The delay the header asks for, relative to `now` (Unix seconds); nil when absent or unparseable.
    /// A date in the past gives zero.
    package static func parse(_ value: String?, now: Int64) -> Duration? {
        guard let trimmed = value?.trimmingWhitespace, !trimmed.isEmpty else { return nil }
        if let seconds = Int64(trimmed) {
            return seconds >= 0 ? .seconds(seconds) : nil
        }
        guard let date = parseHTTPDate(trimmed) else { return nil }
        return .seconds(max(0, date - now))
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// Unix seconds of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 date
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`) or asctime date (`Sun Nov  6 08:49:37 1994`).
    package static func parseHTTPDate(_ text: String) -> Int64? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "-" || $0 == "," }).map(String.init)
        var day: Int?
        var month: Int?
        var year: Int?
        var clock: [Int]?
        for part in parts {
            if part.contains(":") {
                let fields = part.split(separator: ":").compactMap { Int($0) }
                if fields.count == 3 { clock = fields }
            } else if let index = months.firstIndex(of: part.lowercased().prefix(3).description), part.count <= 9,
                month == nil, part.count == 3 || part.lowercased().hasPrefix(months[index])
            {
                if part.count == 3 { month = index + 1 } else { continue }
            } else if let number = Int(part) {
                if day == nil && number <= 31 && part.count <= 2 {
                    day = number
                } else {
                    year = number < 100 ? (number < 70 ? 2000 + number : 1900 + number) : number
                }
            }
        }
        guard let day, let month, let year, let clock else { return nil }
        return daysFromCivil(year: year, month: month, day: day) * 86_400
            + Int64(clock[0] * 3600 + clock[1] * 60 + clock[2])
    }

    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return Int64(era * 146_097 + doe - 719_468)
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
