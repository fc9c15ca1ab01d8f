/// `Double` to integer conversions that cannot trap: `Int64(x)` traps when `x` is NaN, infinite or beyond the
/// integer's range, and a `Double` that came from a peer (a JSON number, a rate computed from one) can be any of
/// those (docs/RELIABILITY.md, "Wire numbers and traps: audit").
extension Int64 {
    /// `value` rounded toward zero, or the nearest bound when it lies beyond them; NaN gives 0.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 0x1p63 {
            self = .max
        } else if value <= -0x1p63 {
            self = .min
        } else {
            self = Int64(value)
        }
    }
}

extension Int {
    /// `value` rounded toward zero, or the nearest bound when it lies beyond them; NaN gives 0.
    public init(saturating value: Double) {
        self = Int(Int64(saturating: value))
    }
}
