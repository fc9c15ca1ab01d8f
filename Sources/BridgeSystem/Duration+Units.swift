/// The conversions of `Duration` the bridge needs, in one place: C APIs take milliseconds or microseconds, metrics
/// take seconds, logs want a short text. Every conversion saturates instead of trapping on a huge duration (a
/// duration can come from a peer, e.g. a `Retry-After`, after range checks that a caller may get wrong).
extension Duration {
    /// The duration in seconds, as a `Double` (for metrics and rates).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Whole milliseconds, rounded down; negative durations give 0, huge ones `Int64.max`.
    public var wholeMilliseconds: Int64 { Self.scaled(self, unitsPerSecond: 1000, roundUp: false) }

    /// Milliseconds rounded up (a timeout or a retry time is never early by the rounding); saturating like
    /// `wholeMilliseconds`.
    public var roundedUpMilliseconds: Int64 { Self.scaled(self, unitsPerSecond: 1000, roundUp: true) }

    /// Whole microseconds, rounded down; saturating like `wholeMilliseconds`.
    public var wholeMicroseconds: Int64 { Self.scaled(self, unitsPerSecond: 1_000_000, roundUp: false) }

    /// Whole nanoseconds, rounded down; saturating like `wholeMilliseconds`.
    public var wholeNanoseconds: Int64 { Self.scaled(self, unitsPerSecond: 1_000_000_000, roundUp: false) }

    /// `250ms` below a second, `1.5s` from a second on: for log lines (`delay=1.5s`).
    public var logText: String {
        let milliseconds = wholeMilliseconds
        guard milliseconds >= 1000 else { return "\(milliseconds)ms" }
        let tenths = (milliseconds % 1000) / 100
        let hundredths = (milliseconds % 100) / 10
        let thousandths = milliseconds % 10
        var fraction = "\(tenths)\(hundredths)\(thousandths)"
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(milliseconds / 1000)" + (fraction.isEmpty ? "" : "." + fraction) + "s"
    }

    private static func scaled(_ duration: Duration, unitsPerSecond: Int64, roundUp: Bool) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 || seconds > 0 else { return 0 }
        let attosecondsPerUnit = 1_000_000_000_000_000_000 / unitsPerSecond
        var fraction = attoseconds / attosecondsPerUnit
        if roundUp && attoseconds % attosecondsPerUnit != 0 { fraction += 1 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: unitsPerSecond)
        guard !overflow else { return .max }
        let (total, overflowSum) = whole.addingReportingOverflow(fraction)
        return overflowSum ? .max : max(0, total)
    }
}
