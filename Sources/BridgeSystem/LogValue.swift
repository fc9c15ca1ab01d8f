/// One field value of a log line, with its type kept: JSON logs write counts and ids as numbers, booleans as
/// booleans and durations as numbers of seconds, so that a log store maps each key to one type
/// (docs/configuration.md "Log fields"). The text format writes the same value as a person reads it.
public enum LogValue: Sendable, Equatable {
    /// Text: names, ids that are not numbers, error descriptions.
    case string(String)
    /// A whole number: counts, activity ids, HTTP statuses.
    case integer(Int64)
    /// A number with a fraction: rates.
    case number(Double)
    /// A flag.
    case boolean(Bool)
    /// A duration, in seconds (`1.5s` in text, `1.5` in JSON).
    case seconds(Double)

    /// The value as the text format writes it (`250ms` and `1.5s` for durations).
    public var text: String {
        switch self {
        case .string(let text): text
        case .integer(let value): String(value)
        case .number(let value): Self.shortest(value)
        case .boolean(let value): value ? "true" : "false"
        // Beyond ~30,000 years a Duration would overflow: such a value (never a real wait) is written as a number.
        case .seconds(let value):
            value.isFinite && abs(value) < 1e12 ? Duration.seconds(value).logText : Self.shortest(value)
        }
    }

    /// Appends the value as JSON. A number that JSON cannot hold (NaN, an infinity) is written as `null`.
    public func appendJSON(to bytes: inout [UInt8]) {
        switch self {
        case .string(let text): appendJSONString(text, to: &bytes)
        case .integer(let value): bytes.append(contentsOf: String(value).utf8)
        case .boolean(let value): bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let value), .seconds(let value):
            bytes.append(contentsOf: (value.isFinite ? Self.shortest(value) : "null").utf8)
        }
    }

    /// `3` for a whole number, else Swift's shortest text that reads back to the same double (`0.25`, `1e-05`, both
    /// valid JSON).
    private static func shortest(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}

/// A value that a log line can carry. Call sites pass plain values (`LogKey.count: items.count`,
/// `LogKey.delay: delay`); the logger turns them into `LogValue`s only when the line is written.
public protocol LogValueConvertible: Sendable {
    /// The typed value.
    var logValue: LogValue { get }
}

extension LogValue: LogValueConvertible {
    /// Itself.
    public var logValue: LogValue { self }
}

extension String: LogValueConvertible {
    /// A string value.
    public var logValue: LogValue { .string(self) }
}

extension Substring: LogValueConvertible {
    /// A string value.
    public var logValue: LogValue { .string(String(self)) }
}

extension Bool: LogValueConvertible {
    /// A boolean value.
    public var logValue: LogValue { .boolean(self) }
}

extension Double: LogValueConvertible {
    /// A number value.
    public var logValue: LogValue { .number(self) }
}

extension Duration: LogValueConvertible {
    /// A duration in seconds.
    public var logValue: LogValue { .seconds(inSeconds) }
}

/// Whole numbers log as integers; one beyond `Int64` (never a count or an id the bridge sees) saturates.
extension LogValueConvertible where Self: BinaryInteger {
    /// An integer value.
    public var logValue: LogValue { .integer(Int64(clamping: self)) }
}

extension Int: LogValueConvertible {}
extension Int64: LogValueConvertible {}
extension Int32: LogValueConvertible {}
extension UInt16: LogValueConvertible {}
extension UInt32: LogValueConvertible {}
extension UInt64: LogValueConvertible {}

extension LogValue: ExpressibleByStringLiteral, ExpressibleByStringInterpolation {
    /// A string value (fields written by hand in tests and tools).
    public init(stringLiteral value: String) { self = .string(value) }
}
