/// Duration strings of the configuration: one or more `<number><unit>` parts, units `h`, `m`, `s`, `ms`, `us`
/// and `ns`, numbers possibly with a fraction: `250ms`, `10s`, `5m`, `1h`, `1m30s`, `1.5s`.
package enum DurationText {
    private static let units: [(suffix: String, nanoseconds: Int64)] = [
        ("ms", 1_000_000), ("us", 1_000), ("ns", 1), ("h", 3_600_000_000_000), ("m", 60_000_000_000),
        ("s", 1_000_000_000),
    ]

    /// The duration `text` denotes, or nil when it is not a duration (no sign, no spaces, a unit on every part).
    package static func parse(_ text: String) -> Duration? {
        var rest = Substring(text)
        var total: Int64 = 0
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let whole = rest.prefix(while: \.isASCIIDigit)
            rest = rest.dropFirst(whole.count)
            var fraction: Substring = ""
            if rest.first == "." {
                rest = rest.dropFirst()
                fraction = rest.prefix(while: \.isASCIIDigit)
                rest = rest.dropFirst(fraction.count)
                if fraction.isEmpty { return nil }
            }
            guard !whole.isEmpty || !fraction.isEmpty else { return nil }
            // Longest suffix first: "ms" must win over "m".
            guard let unit = units.first(where: { rest.hasPrefix($0.suffix) }) else { return nil }
            rest = rest.dropFirst(unit.suffix.count)
            guard let part = nanoseconds(whole: whole, fraction: fraction, unit: unit.nanoseconds) else { return nil }
            let (sum, overflow) = total.addingReportingOverflow(part)
            if overflow { return nil }
            total = sum
        }
        return .nanoseconds(total)
    }

    private static func nanoseconds(whole: Substring, fraction: Substring, unit: Int64) -> Int64? {
        let wholeValue = whole.isEmpty ? 0 : Int64(whole)
        guard let wholeValue else { return nil }
        let (wholePart, overflow) = wholeValue.multipliedReportingOverflow(by: unit)
        if overflow { return nil }
        // A fraction finer than the unit allows (e.g. "1.5ns") is truncated, as digits beyond 18 are.
        var fractionPart: Int64 = 0
        var scale = unit
        for digit in fraction.prefix(18) {
            scale /= 10
            if scale == 0 { break }
            fractionPart += Int64(digit.asciiValue! - 48) * scale
        }
        // `2562047.9h` has a whole part that fits and a sum that does not.
        let (sum, sumOverflow) = wholePart.addingReportingOverflow(fractionPart)
        return sumOverflow ? nil : sum
    }

    /// `duration` in the same notation, largest units first (`1m30s`, `500ms`, `0s`); parses back exactly.
    package static func format(_ duration: Duration) -> String {
        let components = duration.components
        let (whole, overflow) = components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, carry) = whole.addingReportingOverflow(components.attoseconds / 1_000_000_000)
        // Beyond ±292 years (not from a configuration, which parses into nanoseconds) is shown as the bound.
        var nanoseconds = overflow || carry || sum == .min ? (components.seconds < 0 ? -Int64.max : Int64.max) : sum
        guard nanoseconds > 0 else { return nanoseconds == 0 ? "0s" : "-" + format(.nanoseconds(-nanoseconds)) }
        var text = ""
        for (suffix, size) in [
            ("h", Int64(3_600_000_000_000)), ("m", 60_000_000_000), ("s", 1_000_000_000),
            ("ms", 1_000_000), ("us", 1_000), ("ns", 1),
        ]
        where nanoseconds >= size {
            text += "\(nanoseconds / size)\(suffix)"
            nanoseconds %= size
        }
        return text
    }
}

extension Character {
    /// 0–9 only (not other Unicode digits).
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
