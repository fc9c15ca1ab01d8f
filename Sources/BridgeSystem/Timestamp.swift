#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A wall-clock instant with microsecond precision, formatted as RFC 3339 UTC for event lines and logs.
public struct Timestamp: Sendable, Hashable, Comparable {
    /// Microseconds since the Unix epoch.
    public var microsecondsSinceEpoch: Int64

    /// Creates a timestamp from microseconds since the Unix epoch.
    public init(microsecondsSinceEpoch: Int64) {
        self.microsecondsSinceEpoch = microsecondsSinceEpoch
    }

    /// The current wall-clock time (`CLOCK_REALTIME`).
    public static func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(microsecondsSinceEpoch: Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000)
    }

    /// Whole seconds since the epoch (webhook-timestamp header).
    public var unixSeconds: Int64 { microsecondsSinceEpoch / 1_000_000 }

    /// Milliseconds since the epoch.
    public var unixMilliseconds: Int64 { microsecondsSinceEpoch / 1_000 }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.microsecondsSinceEpoch < rhs.microsecondsSinceEpoch
    }

    /// RFC 3339 in UTC with milliseconds, e.g. `2026-12-02T10:15:00.123Z`.
    public var rfc3339: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        appendRFC3339(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the RFC 3339 form to `bytes` without building an intermediate string (hot path).
    public func appendRFC3339(to bytes: inout [UInt8]) {
        var seconds = time_t(microsecondsSinceEpoch.floorDivided(by: 1_000_000))
        let millis = Int(microsecondsSinceEpoch.floorModulo(1_000_000) / 1_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        Self.appendDigits(Int(parts.tm_year) + 1900, count: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        Self.appendDigits(Int(parts.tm_mon) + 1, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        Self.appendDigits(Int(parts.tm_mday), count: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        Self.appendDigits(Int(parts.tm_hour), count: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        Self.appendDigits(Int(parts.tm_min), count: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        Self.appendDigits(Int(parts.tm_sec), count: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        Self.appendDigits(millis, count: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Appends `value` as exactly `count` digits, clamped to 0…10^count−1 (a year before 0 or after 9999, from a
    /// peer's timestamp, is written as 0000 or 9999 instead of trapping on a negative digit).
    private static func appendDigits(_ value: Int, count: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        var rest = min(max(value, 0), divisor * 10 - 1)
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8((rest / divisor) % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    /// Parses RFC 3339 / ISO 8601 UTC or offset times as Directus writes them
    /// (`2026-12-02T10:15:00.123Z`, `2026-12-02T10:15:00+00:00`, `2026-12-02 10:15:00`); nil when a field is out
    /// of range (month 1–12, day 1–31, 00:00:00–23:59:60, offset up to ±23:59).
    public init?(rfc3339 text: String) {
        let b = Array(text.utf8)
        guard b.count >= 19 else { return nil }
        func number(_ start: Int, _ length: Int) -> Int? {
            var value = 0
            for i in start..<(start + length) {
                guard i < b.count, b[i] >= 48, b[i] <= 57 else { return nil }
                value = value * 10 + Int(b[i] - 48)
            }
            return value
        }
        guard let year = number(0, 4), b[4] == UInt8(ascii: "-"), let month = number(5, 2),
            b[7] == UInt8(ascii: "-"), let day = number(8, 2), b[10] == UInt8(ascii: "T") || b[10] == 32,
            let hour = number(11, 2), b[13] == UInt8(ascii: ":"), let minute = number(14, 2),
            b[16] == UInt8(ascii: ":"), let second = number(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var index = 19
        var micros = 0
        if index < b.count, b[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 100_000
            while index < b.count, b[index] >= 48, b[index] <= 57 {
                micros += Int(b[index] - 48) * scale
                scale /= 10
                index += 1
            }
        }
        var offsetSeconds = 0
        if index < b.count {
            switch b[index] {
            case UInt8(ascii: "Z"), UInt8(ascii: "z"): index += 1
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                guard let oh = number(index + 1, 2) else { return nil }
                var om = 0
                if index + 3 < b.count, b[index + 3] == UInt8(ascii: ":") {
                    guard let m = number(index + 4, 2) else { return nil }
                    om = m
                } else if let m = number(index + 3, 2) {
                    om = m
                }
                guard oh < 24, om < 60 else { return nil }
                offsetSeconds = (oh * 3600 + om * 60) * (b[index] == UInt8(ascii: "+") ? 1 : -1)
            default: return nil
            }
        }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        self.init(microsecondsSinceEpoch: seconds * 1_000_000 + Int64(micros))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let q = self / divisor
        return (self % divisor < 0) ? q - 1 : q
    }
    fileprivate func floorModulo(_ divisor: Int64) -> Int64 {
        let r = self % divisor
        return r < 0 ? r + divisor : r
    }
}
