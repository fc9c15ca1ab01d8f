// Optional-chaining accessors (`value["data"]?[0]?["id"]?.keyString`) and literals for building messages.
extension JSONValue {
    /// The member `key` of an object; `nil` for other values or a missing key.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    /// Element `index` of an array; `nil` for other values or an index out of bounds.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The text of a string; `nil` otherwise.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The value of a boolean; `nil` otherwise.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The number; `nil` otherwise.
    public var numberValue: JSONNumber? {
        if case .number(let number) = self { return number }
        return nil
    }

    /// An integer number that fits `Int64`; `nil` otherwise.
    public var int64Value: Int64? { numberValue?.int64Value }

    /// An integer number that fits `Int`; `nil` otherwise.
    public var intValue: Int? { int64Value.flatMap { Int(exactly: $0) } }

    /// Any number as `Double`; `nil` for non-numbers.
    public var doubleValue: Double? { numberValue?.doubleValue }

    /// The elements of an array; `nil` otherwise.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The object; `nil` otherwise.
    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool { self == .null }

    /// The contract's `key` text of a primary-key value: a string's text, an integer's digits; `nil` otherwise.
    public var keyString: String? {
        switch self {
        case .string(let text): return text
        case .number(let number) where number.isInteger: return number.text
        default: return nil
        }
    }

    /// A number from a `Double`; NaN and infinities become `null`, as in JavaScript's `JSON.stringify`.
    public init(_ value: Double) {
        self = JSONNumber(value).map(JSONValue.number) ?? .null
    }

    /// An integer number.
    public init(_ value: Int64) {
        self = .number(JSONNumber(value))
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
    /// A boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer number.
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    /// A number (`null` if not finite).
    public init(floatLiteral value: Double) { self.init(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object with the literal's keys in order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
}
