/// A small JSON document model for work off the hot path: REST responses from Directus, subscribe messages,
/// `check` output. Parsed by ``JSONScanner`` (same strictness), serialised compactly.
///
/// Numbers keep their text, so nothing is lost between parsing and serialising (big integers, `1.50`).
/// Objects keep their keys in order; equality of objects ignores order (JSON objects are unordered).
public enum JSONValue: Sendable, Equatable {
    /// `null`
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, kept as written.
    case number(JSONNumber)
    /// A string, unescaped.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, keys in order.
    case object(JSONObject)
}

/// A JSON number, kept as its text.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number as written, e.g. `42`, `-0.5`, `1e3`.
    public let text: String

    /// A number from JSON number text; `nil` when `text` is not exactly one JSON number.
    public init?(text: String) {
        var copy = text
        let valid = copy.withUTF8 { utf8 -> Bool in
            guard !utf8.isEmpty else { return false }
            var scanner = JSONScanner(UnsafeRawBufferPointer(utf8))
            guard let first = scanner.peek(), first == UInt8(ascii: "-") || first &- UInt8(ascii: "0") < 10 else {
                return false
            }
            return (try? scanner.scanNumber()) != nil && scanner.position == utf8.count
        }
        guard valid else { return nil }
        self.text = text
    }

    /// A number whose text the scanner has already validated.
    init(validatedText: String) {
        self.text = validatedText
    }

    /// An integer.
    public init(_ value: Int64) {
        text = String(value)
    }

    /// An integer.
    public init(_ value: Int) {
        text = String(value)
    }

    /// A floating-point value; `nil` for NaN and infinities, which JSON cannot express.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        text = value.description
    }

    /// Whether the text has no fraction and no exponent.
    public var isInteger: Bool {
        !text.utf8.contains { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") }
    }

    /// The value as `Int64` when the text is an integer in range; `nil` otherwise (`1.0` and `1e2` included).
    public var int64Value: Int64? {
        isInteger ? Int64(text) : nil
    }

    /// The value as the nearest `Double` (±infinity beyond its range).
    public var doubleValue: Double {
        Double(text) ?? .nan
    }

    /// The text.
    public var description: String { text }
}
