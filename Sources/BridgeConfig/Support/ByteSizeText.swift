/// Byte sizes of the configuration: a whole number followed by a binary unit, `B`, `KiB`, `MiB`, `GiB` or `TiB`
/// (`256MiB`, `1GiB`, `65536B`); a plain YAML integer is a number of bytes.
package enum ByteSizeText {
    private static let units: [(suffix: String, bytes: Int)] = [
        ("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1),
    ]

    /// The number of bytes `text` denotes, or nil when it is not a size (no sign, no spaces, no fraction, a unit
    /// required) or does not fit an `Int`.
    package static func parse(_ text: String) -> Int? {
        let digits = text.prefix { ("0"..."9").contains($0) }
        guard !digits.isEmpty, let number = Int(digits) else { return nil }
        let suffix = text.dropFirst(digits.count)
        guard let unit = units.first(where: { $0.suffix == suffix }) else { return nil }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: unit.bytes)
        return overflow ? nil : bytes
    }

    /// `bytes` in the largest unit that divides it exactly (`256MiB`, `1536KiB`, `1000B`); parses back exactly.
    package static func format(_ bytes: Int) -> String {
        for unit in units where bytes != 0 && bytes % unit.bytes == 0 {
            return "\(bytes / unit.bytes)\(unit.suffix)"
        }
        return "\(bytes)B"
    }
}
